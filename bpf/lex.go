package bpf

import "strings"

// tokKind is the kind of a lexical token of a filter expression.
type tokKind uint8

const (
	tEOF tokKind = iota
	tWord
	tLParen
	tRParen
	tNot   // not, !
	tAnd   // and, &&
	tOr    // or, ||
	tSlash // '/': a CIDR prefix, or division
	tOp    // an arithmetic or relational operator: + - * % & | ^ << >> > < >= <= = == !=
	tLBrack
	tRBrack
	tColon // the ':' of proto[offset:size]
	tBad   // a character outside the grammar
)

// token is one lexical token and its byte offset in the expression.
type token struct {
	kind tokKind
	text string
	pos  int
}

func isWordByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '.', '_', ':', '-', '\\':
		return true
	}
	return false
}

// lex splits expr into tokens. It never fails: characters outside the
// subset come back as tBad tokens and the parser reports them in context.
func lex(expr string) []token {
	var toks []token
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '(':
			toks = append(toks, token{tLParen, "(", i})
		case c == ')':
			toks = append(toks, token{tRParen, ")", i})
		case c == '/':
			toks = append(toks, token{tSlash, "/", i})
		case c == '[':
			toks = append(toks, token{tLBrack, "[", i})
		case c == ']':
			toks = append(toks, token{tRBrack, "]", i})
		case c == '!' && (i+1 >= len(expr) || expr[i+1] != '='):
			toks = append(toks, token{tNot, "!", i})
		case c == '&' && i+1 < len(expr) && expr[i+1] == '&':
			toks = append(toks, token{tAnd, "&&", i})
			i += 2
			continue
		case c == '|' && i+1 < len(expr) && expr[i+1] == '|':
			toks = append(toks, token{tOr, "||", i})
			i += 2
			continue
		case c == '-' || c == '+' || c == '*' || c == '%' || c == '&' || c == '|' || c == '^' ||
			c == '<' || c == '>' || c == '=' || c == '!':
			// Two-character operators first: << >> >= <= == !=.
			if i+1 < len(expr) {
				switch two := expr[i : i+2]; two {
				case "<<", ">>", ">=", "<=", "==", "!=":
					toks = append(toks, token{tOp, two, i})
					i += 2
					continue
				}
			}
			toks = append(toks, token{tOp, expr[i : i+1], i})
		case isWordByte(c):
			// A word does not start with '-' (taken above as an
			// operator), as in libpcap's scanner: "ip[0]-1" is
			// "ip[0] - 1", but "icmp-echo" and "1-1" are one word.
			j := i
			for j < len(expr) && isWordByte(expr[j]) {
				j++
			}
			w := expr[i:j]
			if k := strings.IndexByte(w, ':'); k >= 0 && strings.Count(w, ":") == 1 {
				// One colon: not an IPv6 or MAC address but the
				// offset and size of an accessor ("tcp[12:1]").
				if k > 0 {
					toks = append(toks, token{tWord, w[:k], i})
				}
				toks = append(toks, token{tColon, ":", i + k})
				i += k + 1
				continue
			}
			k := tWord
			switch w {
			case "and":
				k = tAnd
			case "or":
				k = tOr
			case "not":
				k = tNot
			}
			toks = append(toks, token{k, w, i})
			i = j
			continue
		default:
			// Take the rest of the run of non-space characters so the
			// error shows e.g. "[13]" or "!=" whole.
			j := i + 1
			for j < len(expr) && expr[j] != ' ' && expr[j] != '\t' && expr[j] != '\n' && expr[j] != '(' && expr[j] != ')' {
				j++
			}
			toks = append(toks, token{tBad, expr[i:j], i})
			i = j
			continue
		}
		i++
	}
	return append(toks, token{tEOF, "", len(expr)})
}
