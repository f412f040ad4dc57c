//go:build linux

#include "textflag.h"
#include "go_asm.h"

// func cloneHolder(stack uintptr, lifeline int32, blk uintptr) (pid int64, errno int64)
//
// clone(CLONE_VM|SIGCHLD) onto stack. The parent returns the child's pid
// (or the errno). The child shares the init's memory, so it runs no Go at
// all, only the system calls below, with every signal blocked (the
// caller's mask): it keeps only the lifeline open, takes the name
// hitl-pidns, sets back to the default every signal the init handles
// (what it starts must not run the init's handlers before it executes),
// and waits in ppoll for the lifeline (a socket whose other end only the
// init holds: it ends when the init closes it or ends), for a signalfd of
// SIGCHLD, as the first process of its PID namespace that every orphan of
// the command is handed to (each that ends is waited for, wait4 WNOHANG,
// never left a zombie holding a pid), and for the pidfd of the command it
// runs, if any.
//
// On the lifeline: a byte 'J' with four descriptors (the command's stdin,
// stdout, stderr and the ruleset of its Landlock domain), when blk (a
// spawnBlock) is not 0 and no command runs, starts the command blk
// describes (spawned, below): 'S' with the command's pidfd goes back once
// it executes, or 'F' when it could not (blk.errno says why). When the
// command ends (its pidfd) the holder says 'E', kills every other process
// of the namespace (kill -1), waits until none is left (ECHILD), keeping
// the command's wait status in blk, and says 'D'. Any other byte, with no
// command running, is a sweep alone: the kill and the wait, and the byte
// back. The lifeline's end, or anything else, ends the holder.
TEXT ·cloneHolder(SB), NOSPLIT|NOFRAME, $0-40
	MOVQ	stack+0(FP), SI
	MOVL	lifeline+8(FP), R12
	MOVQ	blk+16(FP), R15
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
	MOVQ	$-1, pid+24(FP)
	MOVQ	AX, errno+32(FP)
	RET
ok:
	MOVQ	AX, pid+24(FP)
	MOVQ	$0, errno+32(FP)
	RET

child:
	MOVQ	$-1, BX	// the running command's pidfd: none
	XORL	BP, BP	// its pid until its wait status is had: none
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
	// Each signal with a handler (the init's) back to the default: a
	// kernel sigaction of 32 bytes at -256(SP), the old one at -224(SP).
	MOVQ	$0, -256(SP)
	MOVQ	$0, -248(SP)
	MOVQ	$0, -240(SP)
	MOVQ	$0, -232(SP)
	MOVL	$1, R9
dflnext:
	CMPL	R9, $9	// SIGKILL
	JEQ	dflskip
	CMPL	R9, $19	// SIGSTOP
	JEQ	dflskip
	// rt_sigaction(sig, NULL, old, 8)
	MOVL	$13, AX
	MOVL	R9, DI
	XORL	SI, SI
	LEAQ	-224(SP), DX
	MOVL	$8, R10
	SYSCALL
	CMPQ	AX, $0
	JNE	dflskip
	MOVQ	-224(SP), AX	// the handler: SIG_DFL 0, SIG_IGN 1 stay
	CMPQ	AX, $1
	JLS	dflskip
	// rt_sigaction(sig, default, NULL, 8)
	MOVL	$13, AX
	MOVL	R9, DI
	LEAQ	-256(SP), SI
	XORL	DX, DX
	MOVL	$8, R10
	SYSCALL
dflskip:
	INCL	R9
	CMPL	R9, $64
	JLS	dflnext
	// signalfd4(-1, {SIGCHLD}, 8, SFD_NONBLOCK): SIGCHLD stays pending
	// (blocked), and readable here. Without it (-1, which ppoll skips),
	// orphans are waited for at the next sweep.
	MOVQ	$0x10000, AX	// 1 << (SIGCHLD-1)
	MOVQ	AX, -16(SP)
	MOVL	$289, AX	// SYS_signalfd4
	MOVQ	$-1, DI
	LEAQ	-16(SP), SI
	MOVL	$8, DX
	MOVL	$0x800, R10	// SFD_NONBLOCK
	SYSCALL
	MOVQ	AX, R13
	CMPQ	AX, $0
	JGE	wait
	MOVQ	$-1, R13
wait:
	// ppoll({lifeline}, {signalfd}, {the command's pidfd}; POLLIN, no
	// timeout): a negative descriptor is skipped.
	MOVL	R12, -48(SP)
	MOVL	$1, -44(SP)	// events POLLIN, revents 0
	MOVL	R13, -40(SP)
	MOVL	$1, -36(SP)
	MOVL	BX, -32(SP)
	MOVL	$1, -28(SP)
	MOVL	$271, AX	// SYS_ppoll
	LEAQ	-48(SP), DI
	MOVL	$3, SI
	XORL	DX, DX
	XORL	R10, R10
	XORL	R8, R8
	SYSCALL
	CMPQ	AX, $-4	// EINTR: wait again
	JEQ	wait
	CMPQ	AX, $0
	JLT	exit
	MOVWLZX	-42(SP), AX	// the lifeline's revents: a word, or its end
	TESTL	AX, AX
	JNE	lifeline
	MOVWLZX	-26(SP), AX	// the command's: it ended
	TESTL	AX, AX
	JNE	ended
	// read(signalfd, its stack, 128): the pending SIGCHLD taken
	XORL	AX, AX
	MOVL	R13, DI
	LEAQ	-192(SP), SI
	MOVL	$128, DX
	SYSCALL
reap:
	// wait4(-1, status, WNOHANG|__WALL, NULL) until none is left ended
	MOVL	$61, AX
	MOVQ	$-1, DI
	LEAQ	-56(SP), SI
	MOVL	$0x40000001, DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $0
	JLE	wait
	CMPQ	AX, BP
	JNE	reap
	MOVL	-56(SP), AX	// the command's: its status kept
	MOVL	AX, spawnBlock_status(R15)
	MOVL	$1, spawnBlock_seen(R15)
	XORL	BP, BP
	JMP	reap

lifeline:
	TESTQ	R15, R15
	JEQ	read
	// recvmsg(lifeline, &blk.rmsg, 0): a byte, and maybe descriptors
	MOVL	$47, AX
	MOVL	R12, DI
	LEAQ	spawnBlock_rmsg(R15), SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	lifeline
	CMPQ	AX, $1
	JNE	exit
	MOVBLZX	spawnBlock_rbyte(R15), AX
	MOVB	AX, -8(SP)
	CMPL	AX, $0x4a	// 'J'
	JEQ	job
	MOVQ	(spawnBlock_rmsg+40)(R15), AX	// msg_controllen: none for a sweep
	TESTQ	AX, AX
	JNE	exit
	CMPQ	BX, $-1
	JNE	exit
	JMP	sweep
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
sweep:
	// kill(-1, SIGKILL): every process of the namespace but the holder
	MOVL	$62, AX
	MOVQ	$-1, DI
	MOVL	$9, SI
	SYSCALL
drain:
	// wait4(-1, status, __WALL, NULL) until none is left (ECHILD): the
	// killed are waited for, and whoever they leave is handed here.
	MOVL	$61, AX
	MOVQ	$-1, DI
	LEAQ	-56(SP), SI
	MOVL	$0x40000000, DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $-4
	JEQ	drain
	CMPQ	AX, $0
	JLE	swept
	CMPQ	AX, BP
	JNE	drain
	MOVL	-56(SP), AX	// the command's: its status kept
	MOVL	AX, spawnBlock_status(R15)
	MOVL	$1, spawnBlock_seen(R15)
	XORL	BP, BP
	JMP	drain
swept:
	CMPQ	BX, $-1
	JEQ	ack
	// close(the command's pidfd): none runs
	MOVL	$3, AX
	MOVL	BX, DI
	SYSCALL
	MOVQ	$-1, BX
	XORL	BP, BP
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
	JMP	wait

ended:
	// The command ended. Its wait status, where it can be had now (a
	// process tracing it may hold it until the sweep kills that one).
	TESTQ	BP, BP
	JEQ	said
	MOVL	$61, AX
	MOVQ	BP, DI
	LEAQ	-56(SP), SI
	MOVL	$0x40000001, DX	// WNOHANG|__WALL
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, BP
	JNE	said
	MOVL	-56(SP), AX
	MOVL	AX, spawnBlock_status(R15)
	MOVL	$1, spawnBlock_seen(R15)
	XORL	BP, BP
said:
	// write(lifeline, "E", 1); then the sweep, whose byte is 'D'
	MOVB	$0x45, -8(SP)
	MOVL	$1, AX
	MOVL	R12, DI
	LEAQ	-8(SP), SI
	MOVL	$1, DX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	said
	CMPQ	AX, $1
	JNE	exit
	MOVB	$0x44, -8(SP)
	JMP	sweep

job:
	// One command at a time, with exactly four descriptors.
	CMPQ	BX, $-1
	JNE	exit
	MOVQ	(spawnBlock_rmsg+40)(R15), AX	// msg_controllen
	CMPQ	AX, $32
	JNE	exit
	MOVQ	spawnBlock_rctl(R15), AX	// cmsg_len: CMSG_LEN(16)
	CMPQ	AX, $32
	JNE	exit
	MOVL	(spawnBlock_rctl+8)(R15), AX	// SOL_SOCKET
	CMPL	AX, $1
	JNE	exit
	MOVL	(spawnBlock_rctl+12)(R15), AX	// SCM_RIGHTS
	CMPL	AX, $1
	JNE	exit
	MOVQ	$0, spawnBlock_errno(R15)
	MOVL	$-1, spawnBlock_pidfd(R15)
	// clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD|SIGCHLD, the child's own
	// stack, &blk.pidfd, 0, 0): this process waits until the child
	// executes or exits.
	MOVL	$56, AX
	MOVQ	$0x5111, DI
	MOVQ	spawnBlock_cstack(R15), SI
	LEAQ	spawnBlock_pidfd(R15), DX
	XORL	R10, R10
	XORL	R8, R8
	SYSCALL
	CMPQ	AX, $0
	JEQ	spawned
	MOVQ	AX, R14	// the child's pid, or the clone's -errno
	// close(each of the four): the child has its own
	MOVL	$3, AX
	MOVL	(spawnBlock_rctl+16)(R15), DI
	SYSCALL
	MOVL	$3, AX
	MOVL	(spawnBlock_rctl+20)(R15), DI
	SYSCALL
	MOVL	$3, AX
	MOVL	(spawnBlock_rctl+24)(R15), DI
	SYSCALL
	MOVL	$3, AX
	MOVL	(spawnBlock_rctl+28)(R15), DI
	SYSCALL
	CMPQ	R14, $0xfffffffffffff001
	JCS	forked
	NEGQ	R14
	MOVQ	R14, spawnBlock_errno(R15)
	JMP	failed
forked:
	MOVQ	spawnBlock_errno(R15), AX
	TESTQ	AX, AX
	JEQ	started
reapchild:
	// The child could not execute, and exited: waited for, its pidfd
	// closed.
	MOVL	$61, AX
	MOVQ	R14, DI
	XORL	SI, SI
	MOVL	$0x40000000, DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $-4
	JEQ	reapchild
	MOVL	$3, AX
	MOVL	spawnBlock_pidfd(R15), DI
	SYSCALL
failed:
	MOVB	$0x46, -8(SP)	// 'F', written as a sweep's byte is
	JMP	ack
started:
	MOVQ	R14, BP
	MOVLQSX	spawnBlock_pidfd(R15), BX
	MOVL	BX, (spawnBlock_sctl+16)(R15)
sendpidfd:
	// sendmsg(lifeline, &blk.smsg, 0): 'S' with the pidfd
	MOVL	$46, AX
	MOVL	R12, DI
	LEAQ	spawnBlock_smsg(R15), SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	sendpidfd
	CMPQ	AX, $1
	JNE	exit
	JMP	wait

exit:
	// exit_group(0)
	MOVL	$231, AX
	XORL	DI, DI
	SYSCALL
	JMP	exit

// The child, on its own stack, in the holder's (and the init's) memory
// until it executes: each step that fails leaves its errno in blk.errno
// and exits 127. It unblocks every signal (the holder set their handlers
// back to the default), starts a session, enters the command's Landlock
// domain, takes the command's capabilities (no CAP_KILL) and open-file
// limit, puts stdin, stdout and stderr on 0, 1 and 2 (each first above 2,
// so none overwrites another), changes directory, closes all else, and
// executes.
spawned:
	// rt_sigprocmask(SIG_SETMASK, {}, NULL, 8)
	MOVQ	$0, -8(SP)
	MOVL	$14, AX
	MOVL	$2, DI
	LEAQ	-8(SP), SI
	XORL	DX, DX
	MOVL	$8, R10
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	// setsid()
	MOVL	$112, AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	// landlock_restrict_self(the ruleset, 0)
	MOVL	$446, AX
	MOVL	(spawnBlock_rctl+28)(R15), DI
	XORL	SI, SI
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVL	spawnBlock_setCaps(R15), AX
	TESTL	AX, AX
	JEQ	nofile
	// capset(&blk.capHdr, &blk.capData)
	MOVL	$126, AX
	LEAQ	spawnBlock_capHdr(R15), DI
	LEAQ	spawnBlock_capData(R15), SI
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
nofile:
	MOVL	spawnBlock_setNofile(R15), AX
	TESTL	AX, AX
	JEQ	fds
	// prlimit64(0, RLIMIT_NOFILE, &blk.nofile, NULL)
	MOVL	$302, AX
	XORL	DI, DI
	MOVL	$7, SI
	LEAQ	spawnBlock_nofile(R15), DX
	XORL	R10, R10
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
fds:
	// fcntl(each, F_DUPFD, 3) to -16, -24, -32(SP)
	MOVL	$72, AX
	MOVL	(spawnBlock_rctl+16)(R15), DI
	XORL	SI, SI
	MOVL	$3, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVQ	AX, -16(SP)
	MOVL	$72, AX
	MOVL	(spawnBlock_rctl+20)(R15), DI
	XORL	SI, SI
	MOVL	$3, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVQ	AX, -24(SP)
	MOVL	$72, AX
	MOVL	(spawnBlock_rctl+24)(R15), DI
	XORL	SI, SI
	MOVL	$3, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVQ	AX, -32(SP)
	// dup3(each, 0, 1, 2; 0)
	MOVL	$292, AX
	MOVQ	-16(SP), DI
	XORL	SI, SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVL	$292, AX
	MOVQ	-24(SP), DI
	MOVL	$1, SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	MOVL	$292, AX
	MOVQ	-32(SP), DI
	MOVL	$2, SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	// chdir(blk.dir), when there is one
	MOVQ	spawnBlock_dir(R15), DI
	TESTQ	DI, DI
	JEQ	closeall
	MOVL	$80, AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
closeall:
	// close_range(3, ~0, 0)
	MOVL	$436, AX
	MOVL	$3, DI
	MOVL	$0xffffffff, SI
	XORL	DX, DX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	cfail
	// execve(blk.path, blk.argv, blk.envp)
	MOVL	$59, AX
	MOVQ	spawnBlock_path(R15), DI
	MOVQ	spawnBlock_argv(R15), SI
	MOVQ	spawnBlock_envp(R15), DX
	SYSCALL
cfail:
	NEGQ	AX
	MOVQ	AX, spawnBlock_errno(R15)
	// exit(127)
	MOVL	$60, AX
	MOVL	$127, DI
	SYSCALL
	JMP	cfail
