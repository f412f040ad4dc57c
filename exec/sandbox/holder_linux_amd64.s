//go:build linux

#include "textflag.h"

// func cloneHolder(stack uintptr, lifeline int32) (pid int64, errno int64)
//
// clone(CLONE_VM|SIGCHLD) onto stack. The parent returns the child's pid
// (or the errno). The child shares the init's memory, so it runs no Go at
// all, only the system calls below, with every signal blocked (the
// caller's mask): it keeps only the lifeline open, takes the name
// hitl-pidns, reads a byte from the lifeline (a pipe only the init
// writes: the read ends when the init closes it or ends) and exits.
TEXT ·cloneHolder(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ	stack+0(FP), SI
	MOVL	lifeline+8(FP), R12
	MOVQ	$0x111, DI	// CLONE_VM (0x100) | SIGCHLD (17)
	XORL	DX, DX
	XORL	R10, R10
	XORL	R8, R8
	MOVL	$56, AX	// SYS_clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	NEGQ	AX
	MOVQ	$-1, pid+16(FP)
	MOVQ	AX, errno+24(FP)
	RET
ok:
	MOVQ	AX, pid+16(FP)
	MOVQ	$0, errno+24(FP)
	RET

child:
	// close_range(0, lifeline-1, 0): its copy of the init's descriptors
	// (the socket to hitl, other commands' pipes) goes.
	MOVL	$436, AX
	XORL	DI, DI
	MOVL	R12, SI
	DECL	SI
	XORL	DX, DX
	SYSCALL
	// close_range(lifeline+1, ~0, 0)
	MOVL	$436, AX
	MOVL	R12, DI
	INCL	DI
	MOVL	$0xffffffff, SI
	XORL	DX, DX
	SYSCALL
	// prctl(PR_SET_NAME, holderName)
	MOVL	$157, AX
	MOVL	$15, DI
	LEAQ	·holderName(SB), SI
	SYSCALL
read:
	// read(lifeline, a byte of its own stack, 1)
	XORL	AX, AX
	MOVL	R12, DI
	LEAQ	-8(SP), SI
	MOVL	$1, DX
	SYSCALL
	CMPQ	AX, $-4	// EINTR: read again
	JEQ	read
	// exit_group(0)
	MOVL	$231, AX
	XORL	DI, DI
	SYSCALL
	JMP	read
