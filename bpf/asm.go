package bpf

import (
	"errors"

	xbpf "golang.org/x/net/bpf"
)

// MaxInstructions is the longest program the Linux kernel accepts
// (BPF_MAXINSNS).
const MaxInstructions = 4096

// pseudo-instruction kinds of the code generator.
const (
	piPlain = iota // ins, straight-line
	piCond         // conditional jump to labels t and f
	piJa           // unconditional jump to label t
	piLabel        // a jump target; emits nothing
)

type pins struct {
	kind int
	ins  xbpf.Instruction
	cond xbpf.JumpTest
	val  uint32
	t, f int // labels
	far  bool
	x    bool // piCond compares A with X rather than val
}

// codegen emits a node tree as short-circuit jump code.
type codegen struct {
	out    []pins
	labels int
}

func (g *codegen) label() int { g.labels++; return g.labels - 1 }

func (g *codegen) place(l int) { g.out = append(g.out, pins{kind: piLabel, t: l}) }

func (g *codegen) gen(n node, t, f int) {
	switch n := n.(type) {
	case nConst:
		l := f
		if n {
			l = t
		}
		g.out = append(g.out, pins{kind: piJa, t: l})
	case nNot:
		g.gen(n.a, f, t)
	case nAnd:
		m := g.label()
		g.gen(n.a, m, f)
		g.place(m)
		g.gen(n.b, t, f)
	case nOr:
		m := g.label()
		g.gen(n.a, t, m)
		g.place(m)
		g.gen(n.b, t, f)
	case *nRel:
		g.rel(n, t, f)
	case nKeepFalse:
		g.out = append(g.out, pins{kind: piJa, t: f})
	case *nTest:
		if n.ind {
			g.out = append(g.out, pins{ins: xbpf.LoadMemShift{Off: n.hl}})
			g.out = append(g.out, pins{ins: xbpf.LoadIndirect{Off: n.off, Size: n.size}})
		} else {
			g.out = append(g.out, pins{ins: xbpf.LoadAbsolute{Off: n.off, Size: n.size}})
		}
		if n.masked {
			g.out = append(g.out, pins{ins: xbpf.ALUOpConstant{Op: xbpf.ALUOpAnd, Val: n.mask}})
		}
		for i, v := range n.vals {
			if i == len(n.vals)-1 {
				g.out = append(g.out, pins{kind: piCond, cond: n.op, val: v, t: t, f: f})
				break
			}
			m := g.label()
			g.out = append(g.out, pins{kind: piCond, cond: n.op, val: v, t: t, f: m})
			g.place(m)
		}
	}
}

var errTooLong = errors.New("bpf: program longer than 4096 instructions")

// assemble compiles root to a program returning accept for the packets it
// matches and 0 for the others.
func assemble(root node, accept uint32) ([]xbpf.Instruction, error) {
	g := &codegen{}
	tl, fl := g.label(), g.label()
	g.gen(root, tl, fl)
	g.place(tl)
	g.out = append(g.out, pins{ins: xbpf.RetConstant{Val: accept}})
	g.place(fl)
	g.out = append(g.out, pins{ins: xbpf.RetConstant{Val: 0}})
	return g.link()
}

// link resolves labels: it threads jumps through unconditional jumps,
// drops jumps to the next instruction and routes conditional jumps farther
// than 255 instructions through unconditional ones.
func (g *codegen) link() ([]xbpf.Instruction, error) {
	code := g.out
	// layout returns each label's instruction index and the program length;
	// a far conditional takes three instructions.
	layout := func() ([]int, int) {
		pos := make([]int, g.labels)
		n := 0
		for _, c := range code {
			switch {
			case c.kind == piLabel:
				pos[c.t] = n
			case c.kind == piCond && c.far:
				n += 3
			default:
				n++
			}
		}
		return pos, n
	}
	for {
		pos, n := layout()
		// Thread: a label whose instruction is "ja L2" resolves to L2.
		at := make([]*pins, n+1)
		i := 0
		for k := range code {
			switch {
			case code[k].kind == piLabel:
			case code[k].kind == piCond && code[k].far:
				i += 3
			default:
				at[i] = &code[k]
				i++
			}
		}
		resolve := func(l int) int {
			for hops := 0; hops < 64; hops++ {
				c := at[pos[l]]
				if c == nil || c.kind != piJa {
					break
				}
				l = c.t
			}
			return l
		}
		changed := false
		next := make([]pins, 0, len(code))
		i = 0
		for _, c := range code {
			switch c.kind {
			case piLabel:
				next = append(next, c)
				continue
			case piJa:
				c.t = resolve(c.t)
				if pos[c.t] == i+1 {
					changed = true // a jump to the next instruction
					i++
					continue
				}
			case piCond:
				c.t, c.f = resolve(c.t), resolve(c.f)
				if !c.far && (pos[c.t]-i-1 > 255 || pos[c.f]-i-1 > 255) {
					c.far = true
					changed = true
				}
			}
			next = append(next, c)
			if c.kind == piCond && c.far {
				i += 3
			} else {
				i++
			}
		}
		code = next
		// Drop instructions no jump reaches (all jumps go forward).
		pos, n = layout()
		live := make([]bool, n+1)
		if n > 0 {
			live[0] = true
		}
		next = code[:0:0]
		i = 0
		for _, c := range code {
			if c.kind == piLabel {
				next = append(next, c)
				continue
			}
			size := 1
			if c.kind == piCond && c.far {
				size = 3
			}
			if !live[i] {
				changed = true
				i += size
				continue
			}
			switch c.kind {
			case piJa:
				live[pos[c.t]] = true
			case piCond:
				live[pos[c.t]], live[pos[c.f]] = true, true
			default:
				if _, isRet := c.ins.(xbpf.RetConstant); !isRet {
					live[i+size] = true
				}
			}
			next = append(next, c)
			i += size
		}
		code = next
		if !changed {
			break
		}
	}
	pos, n := layout()
	if n > MaxInstructions {
		return nil, errTooLong
	}
	out := make([]xbpf.Instruction, 0, n)
	for _, c := range code {
		i := len(out)
		switch c.kind {
		case piLabel:
		case piPlain:
			out = append(out, c.ins)
		case piJa:
			out = append(out, xbpf.Jump{Skip: uint32(pos[c.t] - i - 1)})
		case piCond:
			if c.x {
				if c.far {
					out = append(out,
						xbpf.JumpIfX{Cond: c.cond, SkipTrue: 0, SkipFalse: 1},
						xbpf.Jump{Skip: uint32(pos[c.t] - i - 2)},
						xbpf.Jump{Skip: uint32(pos[c.f] - i - 3)})
					break
				}
				out = append(out, xbpf.JumpIfX{Cond: c.cond,
					SkipTrue: uint8(pos[c.t] - i - 1), SkipFalse: uint8(pos[c.f] - i - 1)})
				break
			}
			if c.far {
				out = append(out,
					xbpf.JumpIf{Cond: c.cond, Val: c.val, SkipTrue: 0, SkipFalse: 1},
					xbpf.Jump{Skip: uint32(pos[c.t] - i - 2)},
					xbpf.Jump{Skip: uint32(pos[c.f] - i - 3)})
				break
			}
			out = append(out, xbpf.JumpIf{Cond: c.cond, Val: c.val,
				SkipTrue: uint8(pos[c.t] - i - 1), SkipFalse: uint8(pos[c.f] - i - 1)})
		}
	}
	return out, nil
}
