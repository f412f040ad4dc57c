//go:build linux

#include "textflag.h"

// func cloneHolder(stack uintptr, lifeline int32) (pid int64, errno int64)
//
// clone(CLONE_VM|SIGCHLD) onto stack. The parent returns the child's pid
// (or the errno). The child shares the init's memory, so it runs no Go at
// all, only the system calls below, with every signal blocked (the
// caller's mask): it keeps only the lifeline open, takes the name
// hitl-pidns, and waits in ppoll for the lifeline (a socket whose other
// end only the init holds: it ends when the init closes it or ends) and
// for a signalfd of SIGCHLD, as the first process of its PID namespace
// that every orphan of the command is handed to: each that ends is waited
// for (wait4 WNOHANG), never left a zombie holding a pid. A byte on the
// lifeline is the init's word that the command ended: it kills every
// other process of the namespace (kill -1), waits until none is left
// (ECHILD), and writes the byte back. The lifeline's end is its own.
// Where the signalfd cannot be made, it reads the lifeline alone, as a
// holder that reaps only when asked to.
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
	XORL	R14, R14	// 0 until the signalfd is made
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
	// signalfd4(-1, {SIGCHLD}, 8, SFD_NONBLOCK): SIGCHLD stays pending
	// (blocked), and readable here.
	MOVQ	$0x10000, AX	// 1 << (SIGCHLD-1)
	MOVQ	AX, -16(SP)
	MOVL	$289, AX	// SYS_signalfd4
	MOVQ	$-1, DI
	LEAQ	-16(SP), SI
	MOVL	$8, DX
	MOVL	$0x800, R10	// SFD_NONBLOCK
	SYSCALL
	CMPQ	AX, $0
	JLT	read
	MOVL	AX, R13
	MOVL	$1, R14
wait:
	// ppoll({lifeline, POLLIN}, {signalfd, POLLIN}, no timeout)
	MOVL	R12, -48(SP)
	MOVL	$1, -44(SP)	// events POLLIN, revents 0
	MOVL	R13, -40(SP)
	MOVL	$1, -36(SP)
	MOVL	$271, AX	// SYS_ppoll
	LEAQ	-48(SP), DI
	MOVL	$2, SI
	XORL	DX, DX
	XORL	R10, R10
	XORL	R8, R8
	SYSCALL
	CMPQ	AX, $-4	// EINTR: wait again
	JEQ	wait
	CMPQ	AX, $0
	JLT	read	// cannot wait so: only for the lifeline
	MOVWLZX	-42(SP), AX	// the lifeline's revents: a word, or its end
	TESTL	AX, AX
	JNE	read
	// read(signalfd, its stack, 128): the pending SIGCHLD taken
	XORL	AX, AX
	MOVL	R13, DI
	LEAQ	-192(SP), SI
	MOVL	$128, DX
	SYSCALL
reap:
	// wait4(-1, NULL, WNOHANG|__WALL, NULL) until none is left ended
	MOVL	$61, AX
	MOVQ	$-1, DI
	XORL	SI, SI
	MOVL	$0x40000001, DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $0
	JGT	reap
	JMP	wait
read:
	// read(lifeline, a byte of its own stack, 1): a byte is the init's
	// word to sweep; the end (or an error) is the end of the holder.
	XORL	AX, AX
	MOVL	R12, DI
	LEAQ	-8(SP), SI
	MOVL	$1, DX
	SYSCALL
	CMPQ	AX, $-4	// EINTR: read again
	JEQ	read
	CMPQ	AX, $1
	JNE	exit
	// kill(-1, SIGKILL): every process of the namespace but the holder
	MOVL	$62, AX
	MOVQ	$-1, DI
	MOVL	$9, SI
	SYSCALL
drain:
	// wait4(-1, NULL, __WALL, NULL) until none is left (ECHILD): the
	// killed are waited for, and whoever they leave is handed here.
	MOVL	$61, AX
	MOVQ	$-1, DI
	XORL	SI, SI
	MOVL	$0x40000000, DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $0
	JGT	drain
	CMPQ	AX, $-4
	JEQ	drain
ack:
	// write(lifeline, the byte, 1): the namespace holds only the holder
	MOVL	$1, AX
	MOVL	R12, DI
	LEAQ	-8(SP), SI
	MOVL	$1, DX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	ack
	CMPQ	AX, $1
	JNE	exit
	TESTL	R14, R14
	JEQ	read
	JMP	wait
exit:
	// exit_group(0)
	MOVL	$231, AX
	XORL	DI, DI
	SYSCALL
	JMP	exit
