package bpf

import (
	"errors"
	"strconv"
	"strings"

	xbpf "golang.org/x/net/bpf"
)

// ParseRaw reads a program in the decimal form `tcpdump -ddd` prints: the
// instruction count, then one "code jt jf k" line per instruction. Lines may
// also be separated by commas (as in `tcpdump -ddd EXPR | tr '\n' ,`, the
// form iptables' bpf match takes); empty fields, such as the one a trailing
// separator leaves, are ignored. The program is returned as written, for
// whatever link type it was compiled for.
func ParseRaw(text string) (*Program, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' || r == ';' })
	var lines []string
	for _, f := range fields {
		if f = strings.TrimSpace(f); f != "" {
			lines = append(lines, f)
		}
	}
	if len(lines) == 0 {
		return nil, errors.New("bpf: empty raw program")
	}
	count, err := strconv.ParseUint(lines[0], 10, 16)
	if err != nil {
		return nil, errors.New("bpf: raw program: first line must be the instruction count (tcpdump -ddd output), got " + strconv.Quote(lines[0]))
	}
	lines = lines[1:]
	if int(count) != len(lines) {
		return nil, errors.New("bpf: raw program: count says " + strconv.FormatUint(count, 10) + " instructions, " + strconv.Itoa(len(lines)) + " given")
	}
	if count == 0 || count > MaxInstructions {
		return nil, errors.New("bpf: raw program: instruction count must be 1 to 4096")
	}
	raw := make([]xbpf.RawInstruction, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 {
			return nil, errors.New("bpf: raw program: instruction " + strconv.Itoa(i) + ": want \"code jt jf k\", got " + strconv.Quote(l))
		}
		var v [4]uint64
		for j, s := range f {
			bits := []int{16, 8, 8, 32}[j]
			n, err := strconv.ParseUint(s, 10, bits)
			if err != nil {
				// k is printed signed by some tools (ancillary offsets).
				if j == 3 {
					if sn, err2 := strconv.ParseInt(s, 10, 32); err2 == nil {
						n, err = uint64(uint32(int32(sn))), nil
					}
				}
				if err != nil {
					return nil, errors.New("bpf: raw program: instruction " + strconv.Itoa(i) + ": bad number " + strconv.Quote(s))
				}
			}
			v[j] = n
		}
		raw[i] = xbpf.RawInstruction{Op: uint16(v[0]), Jt: uint8(v[1]), Jf: uint8(v[2]), K: uint32(v[3])}
	}
	ins, ok := xbpf.Disassemble(raw)
	if !ok {
		return nil, errors.New("bpf: raw program has instructions that cannot be decoded")
	}
	return &Program{Instructions: ins, LinkType: 0xffff}, nil
}

// FormatRaw writes a program in `tcpdump -ddd` form.
func FormatRaw(raw []xbpf.RawInstruction) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(raw)))
	b.WriteByte('\n')
	for _, r := range raw {
		b.WriteString(strconv.Itoa(int(r.Op)))
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(r.Jt)))
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(r.Jf)))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(uint64(r.K), 10))
		b.WriteByte('\n')
	}
	return b.String()
}
