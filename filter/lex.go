package filter

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // a field name, number, byte string, true/false
	tString         // "..." or r"..." (val holds the decoded text)
	tLParen         // (
	tRParen         // )
	tLBrace         // {
	tRBrace         // }
	tComma          // ,
	tRange          // ..
	tOp             // a relation: == != === !== < <= > >= contains matches ~ in (and their words)
	tAnd            // && and
	tOr             // || or
	tNot            // ! not
	tSlice          // [i:j] after a field name (val holds what is between the brackets)

	// The operators of arithmetic (expr.go).
	tPlus    // +
	tMinus   // - (made by the parser of a word that starts with one: expr.go)
	tStar    // *
	tSlash   // /
	tPercent // %
	tAmp     // & and bitwise_and
)

// op is a relation between a field and a value.
type op uint8

const (
	opPresent  op = iota // bare field
	opEq                 // == eq any_eq: any value equal
	opNe                 // != ne all_ne: present and no value equal
	opAllEq              // === all_eq: present and every value equal
	opAnyNe              // !== ~= any_ne: some value not equal
	opLt                 // <
	opLe                 // <=
	opGt                 // >
	opGe                 // >=
	opContains           // contains
	opMatches            // matches ~
	opIn                 // in {...}
	opNotIn              // not in {...}: no value in the set (tshark 4.0: !(f in {...}), true without the field)
)

var opNames = [...]string{"", "==", "!=", "===", "!==", "<", "<=", ">", ">=", "contains", "matches", "in", "not in"}

// keyword returns the token a reserved word stands for.
func keyword(w string) (tokKind, op, bool) {
	switch w {
	case "and":
		return tAnd, 0, true
	case "or":
		return tOr, 0, true
	case "not":
		return tNot, 0, true
	case "eq", "any_eq":
		return tOp, opEq, true
	case "ne", "all_ne":
		return tOp, opNe, true
	case "all_eq":
		return tOp, opAllEq, true
	case "any_ne":
		return tOp, opAnyNe, true
	case "lt":
		return tOp, opLt, true
	case "le":
		return tOp, opLe, true
	case "gt":
		return tOp, opGt, true
	case "ge":
		return tOp, opGe, true
	case "contains":
		return tOp, opContains, true
	case "matches":
		return tOp, opMatches, true
	case "in":
		return tOp, opIn, true
	case "bitwise_and":
		return tAmp, 0, true
	}
	return 0, 0, false
}

// token is one lexical token; pos is its byte offset in the expression.
type token struct {
	kind tokKind
	op   op
	pos  int
	text string // the source text
	val  string // decoded string (tString)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == ':' || c == '-' || c == '/' // '/': a subnet, 192.0.2.0/24
}

// lex splits the expression into tokens, ending with a tEOF token.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= len(src) {
			return append(toks, token{kind: tEOF, pos: len(src)}), nil
		}
		start := i
		c := src[i]
		two := ""
		if i+1 < len(src) {
			two = src[i : i+2]
		}
		simple := func(k tokKind, o op, n int) {
			toks = append(toks, token{kind: k, op: o, pos: start, text: src[start : start+n]})
			i = start + n
		}
		switch {
		case strings.HasPrefix(src[i:], "==="):
			simple(tOp, opAllEq, 3)
		case strings.HasPrefix(src[i:], "!=="):
			simple(tOp, opAnyNe, 3)
		case two == "~=":
			simple(tOp, opAnyNe, 2) // Wireshark 3.6's any_ne, still read by 4.0
		case two == "==":
			simple(tOp, opEq, 2)
		case two == "!=":
			simple(tOp, opNe, 2)
		case two == "<=":
			simple(tOp, opLe, 2)
		case two == ">=":
			simple(tOp, opGe, 2)
		case two == "&&":
			simple(tAnd, 0, 2)
		case two == "||":
			simple(tOr, 0, 2)
		case two == "..":
			simple(tRange, 0, 2)
		case c == '<':
			simple(tOp, opLt, 1)
		case c == '>':
			simple(tOp, opGt, 1)
		case c == '~':
			simple(tOp, opMatches, 1)
		case c == '!':
			simple(tNot, 0, 1)
		case c == '(':
			simple(tLParen, 0, 1)
		case c == ')':
			simple(tRParen, 0, 1)
		case c == '{':
			simple(tLBrace, 0, 1)
		case c == '}':
			simple(tRBrace, 0, 1)
		case c == ',':
			simple(tComma, 0, 1)
		case c == '"' || c == 'r' && two == `r"`:
			t, err := lexString(src, start)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = start + len(t.text)
		case c == '+':
			simple(tPlus, 0, 1)
		case c == '*':
			simple(tStar, 0, 1)
		case c == '%':
			simple(tPercent, 0, 1)
		case c == '&':
			simple(tAmp, 0, 1)
		case c == '/':
			simple(tSlash, 0, 1)
		case isWordByte(c):
			for i < len(src) && isWordByte(src[i]) && !strings.HasPrefix(src[i:], "..") {
				// A slash is a subnet's (192.0.2.0/24) after an address,
				// else a division (ddp.msn/2), as tshark reads them.
				if src[i] == '/' && !isAddr(src[start:i]) {
					break
				}
				i++
			}
			w := src[start:i]
			t := token{kind: tWord, pos: start, text: w}
			if k, o, ok := keyword(w); ok {
				t.kind, t.op = k, o
			}
			toks = append(toks, t)
		case c == '=':
			return nil, errAt(start, `"=" is not an operator: use == to compare`)
		case c == '[':
			j := strings.IndexByte(src[i:], ']')
			if j < 0 {
				return nil, errAt(start, "unclosed slice: missing ]")
			}
			toks = append(toks, token{kind: tSlice, pos: start, text: src[i : i+j+1], val: strings.Join(strings.Fields(src[i+1:i+j]), "")})
			i += j + 1
		case c == '$':
			// tshark 4.0 reads ${field} as the field's value in the packet
			// selected in Wireshark's window: tshark has none, and matches
			// nothing.
			return nil, errAt(start, "a field reference ${field} is the field's value in the packet selected in Wireshark; iwarpdump, like tshark, has no selected packet: compare with the field itself (ddp.msn == ddp.mo)")
		case c == '|':
			return nil, errAt(start, `"|" is not supported: use || (or)`)
		case c == '\'':
			return nil, errAt(start, `strings are written in double quotes ("...")`)
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, errAt(start, "unexpected character "+strconv.QuoteRune(r))
		}
	}
}

// lexString reads a double-quoted string at src[start] ('"' or 'r"').
// Escapes follow Wireshark: \\ \" \' \a \b \f \n \r \t \v, \xHH and octal
// \OOO. A raw string r"..." keeps its backslashes; a backslash still stops
// the next double quote from ending it.
func lexString(src string, start int) (token, error) {
	raw := src[start] == 'r'
	i := start + 1
	if raw {
		i++
	}
	var b strings.Builder
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return token{kind: tString, pos: start, text: src[start : i+1], val: b.String()}, nil
		case c == '\\' && raw:
			if i+1 < len(src) {
				b.WriteString(src[i : i+2])
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
		case c == '\\':
			if i+1 >= len(src) {
				return token{}, errAt(start, "unterminated string")
			}
			e := src[i+1]
			switch e {
			case '\\', '"', '\'':
				b.WriteByte(e)
				i += 2
			case 'a', 'b', 'f', 'n', 'r', 't', 'v':
				b.WriteByte("\a\b\f\n\r\t\v"[strings.IndexByte("abfnrtv", e)])
				i += 2
			case 'x':
				j := i + 2
				for j < len(src) && j < i+4 && isHex(src[j]) {
					j++
				}
				if j == i+2 {
					return token{}, errAt(i, `\x needs hex digits`)
				}
				v, _ := strconv.ParseUint(src[i+2:j], 16, 8)
				b.WriteByte(byte(v))
				i = j
			case '0', '1', '2', '3', '4', '5', '6', '7':
				j := i + 1
				for j < len(src) && j < i+4 && src[j] >= '0' && src[j] <= '7' {
					j++
				}
				v, err := strconv.ParseUint(src[i+1:j], 8, 8)
				if err != nil {
					return token{}, errAt(i, "octal escape out of range")
				}
				b.WriteByte(byte(v))
				i = j
			default:
				return token{}, errAt(i, "unknown escape "+strconv.Quote(src[i:i+2]))
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{}, errAt(start, "unterminated string")
}

// isAddr reports whether w is an IP address, before the slash of a subnet.
func isAddr(w string) bool {
	_, err := netip.ParseAddr(w)
	return err == nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
