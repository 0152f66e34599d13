package bpf

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gopacket/gopacket/layers"
	xbpf "golang.org/x/net/bpf"
)

// DefaultSnaplen is the snapshot length tcpdump uses when -s is not given
// (libpcap's MAXIMUM_SNAPLEN): the value an accepting program returns.
const DefaultSnaplen = 262144

// ErrUnsupported is what an *Error for syntax outside the compiler's subset
// unwraps to (errors.Is). Such an expression may be valid for libpcap.
var ErrUnsupported = errors.New("bpf: unsupported filter syntax")

// ErrLinkType: the compiler does not generate code for this link type.
var ErrLinkType = errors.New("bpf: link type not supported by the filter compiler")

// Error is a filter expression that cannot be compiled: a syntax error, a
// semantic error libpcap reports too ("illegal port number 70000 > 65535"),
// or a construct outside the subset (Unsupported).
type Error struct {
	Expr        string // the whole expression
	Pos         int    // byte offset of Token in Expr
	Token       string // the offending part of the expression
	Msg         string
	Unsupported bool
}

// Error returns e.g. `bpf: unsupported "tcp[13]": packet data accessors
// (proto[offset]) are not supported`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("bpf: ")
	if e.Unsupported {
		b.WriteString("unsupported ")
		b.WriteString(strconv.Quote(e.Token))
		b.WriteString(": ")
		b.WriteString(e.Msg)
		b.WriteString(" (the pure-Go compiler handles host, net, port, portrange, proto, src/dst, ether host/proto, broadcast, multicast, ip, ip6, arp, rarp, tcp, udp, sctp, icmp, icmp6, igmp, vlan, less, greater, proto[expr:size] and len with arithmetic and comparisons, and/or/not and parentheses; build with -tags libpcap for full libpcap syntax)")
		return b.String()
	}
	b.WriteString(e.Msg)
	if e.Token != "" && !strings.Contains(e.Msg, strconv.Quote(e.Token)) {
		b.WriteString(" (at ")
		b.WriteString(strconv.Quote(e.Token))
		b.WriteString(")")
	}
	return b.String()
}

// Is reports whether target is ErrUnsupported for an unsupported construct.
func (e *Error) Is(target error) bool { return target == ErrUnsupported && e.Unsupported }

// Program is a classic BPF program for one link type: its instructions,
// and what is known of how it reads the packet.
type Program struct {
	// Instructions is the program, as golang.org/x/net/bpf instructions.
	Instructions []xbpf.Instruction
	// LinkType is the link type the program was compiled for
	// (capture.LinkTypeUnknown-like 0xffff for a raw program).
	LinkType layers.LinkType
	// VLAN is set when the expression has a vlan primitive: the program
	// expects 802.1Q tags in the packet data, which Linux strips before a
	// socket filter sees the packet, so such a program must run in user
	// space on packets whose tags were put back.
	VLAN bool
}

// Compile compiles a tcpdump filter expression for link type lt. An
// accepted packet makes the program return snaplen (0 means
// DefaultSnaplen), as libpcap's programs do; a rejected one 0. An empty
// expression accepts every packet.
func Compile(expr string, lt layers.LinkType, snaplen int) (prog *Program, err error) {
	if snaplen <= 0 {
		snaplen = DefaultSnaplen
	}
	link, ok := linkOf(lt)
	if !ok {
		return nil, &Error{Expr: expr, Pos: 0, Msg: "link type " + strconv.Itoa(int(lt)) + " (" + lt.String() + ") is not supported by the pure-Go filter compiler (Ethernet, Linux cooked and raw IP are)"}
	}
	p := &parser{expr: expr, toks: lex(expr), link: link}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			prog, err = nil, e
		}
	}()
	root := p.lower(p.parse())
	ins, err := assemble(root, uint32(snaplen))
	if err != nil {
		return nil, err
	}
	return &Program{Instructions: ins, LinkType: lt, VLAN: p.vlan}, nil
}

// Accept returns the program that accepts every packet, cut to snaplen
// octets.
func Accept(snaplen int) *Program {
	if snaplen <= 0 {
		snaplen = DefaultSnaplen
	}
	return &Program{Instructions: []xbpf.Instruction{xbpf.RetConstant{Val: uint32(snaplen)}}, LinkType: 0xffff}
}

// Raw assembles the program for a socket filter (SO_ATTACH_FILTER).
func (p *Program) Raw() ([]xbpf.RawInstruction, error) {
	return xbpf.Assemble(p.Instructions)
}

// String lists the program one instruction a line, in the assembler syntax
// of golang.org/x/net/bpf.
func (p *Program) String() string {
	var b strings.Builder
	for i, ins := range p.Instructions {
		b.WriteString("(")
		s := strconv.Itoa(i)
		b.WriteString(strings.Repeat("0", max(0, 3-len(s))))
		b.WriteString(s)
		b.WriteString(") ")
		if st, ok := ins.(interface{ String() string }); ok {
			b.WriteString(st.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Matcher runs a program in user space (golang.org/x/net/bpf's VM). It is
// safe for concurrent use.
type Matcher struct {
	vm      *xbpf.VM
	ins     []xbpf.Instruction // as run by vm
	usesLen bool               // ins loads the packet length
}

// NewMatcher prepares p to run on packets. It fails for programs the VM
// cannot run (ancillary loads other than the packet length).
func (p *Program) NewMatcher() (*Matcher, error) {
	ins := p.Instructions
	for i, in := range ins {
		if _, ok := in.(xbpf.NegateA); ok {
			// golang.org/x/net/bpf's VM runs "neg" as a no-op; A *
			// 0xffffffff is -A in 32 bits, in one instruction as well.
			if &ins[0] == &p.Instructions[0] {
				ins = append([]xbpf.Instruction(nil), p.Instructions...)
			}
			ins[i] = xbpf.ALUOpConstant{Op: xbpf.ALUOpMul, Val: 0xffffffff}
		}
	}
	vm, err := xbpf.NewVM(ins)
	if err != nil {
		return nil, errors.New("bpf: " + err.Error())
	}
	m := &Matcher{vm: vm, ins: ins}
	for _, in := range ins {
		if ext, ok := in.(xbpf.LoadExtension); ok && ext.Num == xbpf.ExtLen {
			m.usesLen = true
		}
	}
	return m, nil
}

// Match reports whether the program accepts the packet (returns non-zero).
// It does not allocate.
func (m *Matcher) Match(data []byte) bool {
	n, err := m.vm.Run(data)
	return err == nil && n > 0
}

// Run returns the program's return value for data: 0 for a rejected
// packet, else the number of octets to keep.
func (m *Matcher) Run(data []byte) int {
	n, err := m.vm.Run(data)
	if err != nil {
		return 0
	}
	return n
}

// MatchWire is Match for a packet of wireLen octets of which data holds
// the first, captured ones (a snap length cut it): len, less and greater
// compare wireLen, as libpcap's interpreter and the kernel do, while loads
// past the captured octets still reject the packet. Match takes len(data)
// as the length. MatchWire allocates only for a cut packet and a program
// that reads the length.
func (m *Matcher) MatchWire(data []byte, wireLen int) bool {
	if !m.usesLen || wireLen <= len(data) {
		return m.Match(data)
	}
	ins := append([]xbpf.Instruction(nil), m.ins...)
	for i, in := range ins {
		if ext, ok := in.(xbpf.LoadExtension); ok && ext.Num == xbpf.ExtLen {
			ins[i] = xbpf.LoadConstant{Dst: xbpf.RegA, Val: uint32(wireLen)}
		}
	}
	vm, err := xbpf.NewVM(ins)
	if err != nil {
		return false
	}
	n, err := vm.Run(data)
	return err == nil && n > 0
}
