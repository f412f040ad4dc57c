package model

// EnglishTerms is englishTerms, for the tests.
var EnglishTerms = englishTerms
