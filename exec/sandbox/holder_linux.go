package sandbox

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// The holder is the first process of each command's PID namespace (the
// command is the second): it does nothing until the init kills it, or the
// init ends, which ends the namespace and all the command left. It is a program of a few
// bytes that hitl writes into a sealed memfd when the init starts, so that
// starting it costs an exec of nothing (a vfork, no copy of the init's
// memory, no dynamic loader). Where hitl has no such program (another
// architecture), the holder is a fork of the init (forkHolder).

// holderCode is the holder's machine code for GOARCH, or nil: it reads a
// byte from its stdin — a pipe whose other end only the init holds, so the
// read ends when the init does, however it ends — and exits.
func holderCode(goarch string) []byte {
	switch goarch {
	case "amd64":
		return []byte{
			0x31, 0xc0, // xor eax, eax (read)
			0x31, 0xff, // xor edi, edi (fd 0)
			0x48, 0x89, 0xe6, // mov rsi, rsp (a byte of the stack)
			0xba, 0x01, 0x00, 0x00, 0x00, // mov edx, 1
			0x0f, 0x05, // syscall
			0xb8, 0xe7, 0x00, 0x00, 0x00, // mov eax, 231 (exit_group)
			0x31, 0xff, // xor edi, edi
			0x0f, 0x05, // syscall
		}
	}
	return nil
}

// holderELF is a static ELF executable whose one segment is code, loaded
// at 0x400000 and entered at its first byte; nil where holderCode has
// nothing.
func holderELF(goarch string) []byte {
	code := holderCode(goarch)
	if code == nil {
		return nil
	}
	const (
		base    = 0x400000
		ehsize  = 64
		phsize  = 56
		codeOff = ehsize + phsize
	)
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Entry: base + codeOff, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 1,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	hdr.Ident[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	size := uint64(codeOff + len(code))
	ph := elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Off: 0, Vaddr: base, Paddr: base, Filesz: size, Memsz: size, Align: 0x1000,
	}
	_ = binary.Write(&b, le, hdr)
	_ = binary.Write(&b, le, ph)
	b.Write(code)
	return b.Bytes()
}

// holderFile is the holder program in a sealed memfd (close-on-exec), or
// nil where there is none.
func holderFile() (*os.File, error) {
	prog := holderELF(runtime.GOARCH)
	if prog == nil {
		return nil, nil
	}
	fd, err := unix.MemfdCreate("hitl-pidns", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "hitl-pidns")
	if _, err := f.Write(prog); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
