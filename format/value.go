package format

// Kind is the type of a Value.
type Kind uint8

// Value kinds.
const (
	KNull Kind = iota
	KUint
	KInt
	KBool
	KString
	KBytes
	KList
	KObject
)

// Value is one field value of a record.
type Value struct {
	Kind  Kind
	U     uint64
	I     int64
	B     bool
	S     string
	Bytes []byte
	List  []Value
	Obj   []KV
}

// KV is a named value.
type KV struct {
	Key string
	Val Value
}

// Constructors.
func Uint(u uint64) Value       { return Value{Kind: KUint, U: u} }
func Int(i int64) Value         { return Value{Kind: KInt, I: i} }
func Bool(b bool) Value         { return Value{Kind: KBool, B: b} }
func Str(s string) Value        { return Value{Kind: KString, S: s} }
func Bytes(b []byte) Value      { return Value{Kind: KBytes, Bytes: b} }
func List(l []Value) Value      { return Value{Kind: KList, List: l} }
func Object(o []KV) Value       { return Value{Kind: KObject, Obj: o} }
func Null() Value               { return Value{Kind: KNull} }
func kv(k string, v Value) KV   { return KV{Key: k, Val: v} }
func kvu(k string, u uint64) KV { return KV{Key: k, Val: Uint(u)} }
func kvb(k string, b bool) KV   { return KV{Key: k, Val: Bool(b)} }
func kvs(k string, s string) KV { return KV{Key: k, Val: Str(s)} }

// Get finds a key in a KV list; dotted paths descend into objects
// ("rdmap.term.code" finds key "rdmap.term" then "code", or a flat key
// "rdmap.term.code" directly).
func Get(kvs []KV, path string) (Value, bool) {
	for _, e := range kvs {
		if e.Key == path {
			return e.Val, true
		}
	}
	for _, e := range kvs {
		if len(path) > len(e.Key)+1 && path[:len(e.Key)] == e.Key && path[len(e.Key)] == '.' && e.Val.Kind == KObject {
			if v, ok := Get(e.Val.Obj, path[len(e.Key)+1:]); ok {
				return v, true
			}
		}
	}
	return Value{}, false
}
