package format

import (
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendJSON appends one JSON object for the key/value list (no newline).
// Integers are printed exactly, byte strings as lowercase hex, and strings
// are always valid UTF-8 with control characters escaped.
func AppendJSON(dst []byte, kvs []KV) []byte {
	dst = append(dst, '{')
	for i, e := range kvs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, e.Key)
		dst = append(dst, ':')
		dst = appendJSONValue(dst, e.Val)
	}
	return append(dst, '}')
}

func appendJSONValue(dst []byte, v Value) []byte {
	switch v.Kind {
	case KUint:
		return strconv.AppendUint(dst, v.U, 10)
	case KInt:
		return strconv.AppendInt(dst, v.I, 10)
	case KBool:
		return strconv.AppendBool(dst, v.B)
	case KString:
		return appendJSONString(dst, v.S)
	case KBytes:
		dst = append(dst, '"')
		for _, b := range v.Bytes {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
		}
		return append(dst, '"')
	case KList:
		dst = append(dst, '[')
		for i, e := range v.List {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONValue(dst, e)
		}
		return append(dst, ']')
	case KObject:
		return AppendJSON(dst, v.Obj)
	}
	return append(dst, "null"...)
}

// jsonPlain marks the octets appendJSONString copies as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		switch c {
		case '"', '\\', '<', '>', '&':
		default:
			t[c] = true
		}
	}
	return t
}()

// appendJSONString quotes s for JSON: invalid UTF-8 becomes U+FFFD, control
// characters and the characters HTML treats specially are \u-escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// Most strings (keys, names, addresses) need no escaping: copy the
	// plain prefix in one go.
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' || (r >= 0x80 && r < 0xa0) {
			dst = append(dst, '\\', 'u')
			dst = append(dst, hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
