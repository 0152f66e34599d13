package bpf

import (
	"fmt"
	"strings"

	xbpf "golang.org/x/net/bpf"
)

// FormatImage writes a program as `tcpdump -d` prints one: an instruction
// a line, numbered, in libpcap's notation (bpf_image: "(000) ldh [12]",
// "jeq #0x800 jt 2 jf 5", "ret #262144"), Linux's ancillary loads by their
// names ("[vlanp]").
func FormatImage(raw []xbpf.RawInstruction) string {
	var b strings.Builder
	for i, r := range raw {
		op, operand := image(r, i)
		if r.Op&0x07 == classJmp && r.Op&0xf0 != opJA {
			fmt.Fprintf(&b, "(%03d) %-8s %-16s jt %d\tjf %d\n", i, op, operand, i+1+int(r.Jt), i+1+int(r.Jf))
		} else {
			fmt.Fprintf(&b, "(%03d) %-8s %s\n", i, op, operand)
		}
	}
	return b.String()
}

// FormatC writes a program as `tcpdump -dd` prints one: a C array
// initialiser, an instruction a line.
func FormatC(raw []xbpf.RawInstruction) string {
	var b strings.Builder
	for _, r := range raw {
		fmt.Fprintf(&b, "{ 0x%x, %d, %d, 0x%08x },\n", r.Op, r.Jt, r.Jf, r.K)
	}
	return b.String()
}

// Instruction classes and the codes image tells apart (linux/filter.h,
// pcap/bpf.h).
const (
	classLd   = 0x00
	classLdx  = 0x01
	classSt   = 0x02
	classStx  = 0x03
	classAlu  = 0x04
	classJmp  = 0x05
	classRet  = 0x06
	classMisc = 0x07

	opJA = 0x00

	skfAdOff = 0xfffff000 // SKF_AD_OFF (-0x1000): Linux's ancillary data
)

// ancillary names Linux's ancillary loads as libpcap's bpf_image does.
var ancillary = map[uint32]string{
	0: "proto", 4: "type", 8: "ifidx", 12: "nla", 16: "nlan", 20: "mark", 24: "queue",
	28: "hatype", 32: "rxhash", 36: "cpu", 44: "vlan_tci", 48: "vlanp", 52: "poff",
}

// image returns an instruction's operation and operand as bpf_image
// prints them; n is its index, for the target of ja.
func image(r xbpf.RawInstruction, n int) (string, string) {
	k := r.K
	mem := func(op string) (string, string) { return op, fmt.Sprintf("M[%d]", int32(k)) }
	abs := func(op string) (string, string) {
		if k >= skfAdOff {
			if name, ok := ancillary[k-skfAdOff]; ok {
				return op, "[" + name + "]"
			}
		}
		return op, fmt.Sprintf("[%d]", int32(k))
	}
	size := map[uint16]string{0x00: "ld", 0x08: "ldh", 0x10: "ldb"}
	switch r.Op & 0x07 {
	case classRet:
		switch r.Op & 0x18 {
		case 0x00: // K
			return "ret", fmt.Sprintf("#%d", int32(k))
		case 0x10: // A
			return "ret", ""
		}
	case classLd:
		name, ok := size[r.Op&0x18]
		if !ok {
			break
		}
		switch r.Op & 0xe0 {
		case 0x20: // ABS
			return abs(name)
		case 0x40: // IND
			return name, fmt.Sprintf("[x + %d]", int32(k))
		case 0x00: // IMM
			if r.Op == 0x00 {
				return "ld", fmt.Sprintf("#0x%x", k)
			}
		case 0x60: // MEM
			if r.Op == 0x60 {
				return mem("ld")
			}
		case 0x80: // LEN
			if r.Op == 0x80 {
				return "ld", "#pktlen"
			}
		}
	case classLdx:
		switch r.Op {
		case 0x01: // IMM
			return "ldx", fmt.Sprintf("#0x%x", k)
		case 0x61: // MEM
			return mem("ldx")
		case 0x81: // LEN
			return "ldx", "#pktlen"
		case 0xb1: // MSH|B
			return "ldxb", fmt.Sprintf("4*([%d]&0xf)", int32(k))
		}
	case classSt:
		if r.Op == 0x02 {
			return mem("st")
		}
	case classStx:
		if r.Op == 0x03 {
			return mem("stx")
		}
	case classJmp:
		ops := map[uint16]string{0x00: "ja", 0x10: "jeq", 0x20: "jgt", 0x30: "jge", 0x40: "jset"}
		name, ok := ops[r.Op&0xf0]
		if !ok {
			break
		}
		if name == "ja" {
			return "ja", fmt.Sprintf("%d", n+1+int(int32(k)))
		}
		if r.Op&0x08 != 0 {
			return name, "x"
		}
		return name, fmt.Sprintf("#0x%x", k)
	case classAlu:
		ops := map[uint16]string{0x00: "add", 0x10: "sub", 0x20: "mul", 0x30: "div", 0x40: "or", 0x50: "and",
			0x60: "lsh", 0x70: "rsh", 0x80: "neg", 0x90: "mod", 0xa0: "xor"}
		name, ok := ops[r.Op&0xf0]
		if !ok {
			break
		}
		if name == "neg" {
			return "neg", ""
		}
		if r.Op&0x08 != 0 {
			return name, "x"
		}
		switch name {
		case "and", "or", "xor":
			return name, fmt.Sprintf("#0x%x", k)
		}
		return name, fmt.Sprintf("#%d", int32(k))
	case classMisc:
		switch r.Op {
		case 0x07:
			return "tax", ""
		case 0x87:
			return "txa", ""
		}
	}
	return "unimp", fmt.Sprintf("0x%x", r.Op)
}
