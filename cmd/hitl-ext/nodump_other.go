//go:build !linux

package main

func noDump() {}
