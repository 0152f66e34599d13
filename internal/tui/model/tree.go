package model

import (
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
)

// Node is one line of the detail tree: a field of the record, a protocol
// group or an item of a list.
type Node struct {
	// Path identifies the node: the field's key with its parents' and list
	// indexes ("rdmap.read.sink_stag", "mpa.markers[0].fpduptr"); group
	// nodes have the layer's name ("mpa", "ddp", "rdmap") or "record".
	// Layout.Spans takes it.
	Path string
	// Name is the field registry's name for the field (dissect.Lookup),
	// "" when the registry does not describe it.
	Name  string
	Label string // what the tree shows: "name: value"
	Desc  string // the registry's description
	Ref   string // the RFC section that defines the field
	// Frames are the frames a field refers to (frames, first_frame,
	// last_frame, request_frame, rdmap.term.segment_frame, a finding's
	// frames): Enter on it goes there, as Wireshark's frame links.
	Frames   []uint64
	Children []*Node
	open     bool // expanded unless the user said otherwise
}

// Tree is the detail tree of the selected record: its nodes, which are
// expanded, and the current node. Expansion is remembered by path, so
// moving from one Read Request to the next keeps rdmap.read as it was.
type Tree struct {
	Roots    []*Node
	expanded map[string]bool
	cur      string
	rec      *flows.Record
}

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{expanded: make(map[string]bool)} }

// Record returns the record shown, or nil.
func (t *Tree) Record() *flows.Record { return t.rec }

// SetRecord shows r (nil clears the tree). The current node stays on the
// same path when the new record has it, else goes to the first node.
func (t *Tree) SetRecord(r *flows.Record) {
	t.rec = r
	t.Roots = nil
	if r != nil {
		t.Roots = buildTree(r)
	}
	if t.find(t.cur) == nil {
		t.cur = ""
		if vis := t.Visible(); len(vis) > 0 {
			t.cur = vis[0].Node.Path
		}
	}
}

// VisibleNode is a node as the tree shows it, with its depth (0 for
// top-level nodes).
type VisibleNode struct {
	Node  *Node
	Depth int
}

// Visible returns the nodes shown, in order: the children of expanded
// nodes follow them.
func (t *Tree) Visible() []VisibleNode {
	var out []VisibleNode
	var walk func(ns []*Node, d int)
	walk = func(ns []*Node, d int) {
		for _, n := range ns {
			out = append(out, VisibleNode{n, d})
			if len(n.Children) > 0 && t.IsExpanded(n) {
				walk(n.Children, d+1)
			}
		}
	}
	walk(t.Roots, 0)
	return out
}

// IsExpanded reports whether n shows its children.
func (t *Tree) IsExpanded(n *Node) bool {
	if v, ok := t.expanded[n.Path]; ok {
		return v
	}
	return n.open
}

// Current returns the current node, or nil.
func (t *Tree) Current() *Node { return t.find(t.cur) }

// SetCurrent makes the node at path current when it is visible.
func (t *Tree) SetCurrent(path string) {
	for _, v := range t.Visible() {
		if v.Node.Path == path {
			t.cur = path
			return
		}
	}
}

func (t *Tree) find(path string) *Node {
	if path == "" {
		return nil
	}
	var found *Node
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			if found != nil {
				return
			}
			if n.Path == path {
				found = n
				return
			}
			walk(n.Children)
		}
	}
	walk(t.Roots)
	return found
}

// Move moves the current node by delta visible lines.
func (t *Tree) Move(delta int) {
	vis := t.Visible()
	if len(vis) == 0 {
		return
	}
	i := 0
	for j, v := range vis {
		if v.Node.Path == t.cur {
			i = j
		}
	}
	i = min(max(i+delta, 0), len(vis)-1)
	t.cur = vis[i].Node.Path
}

// Expand shows the current node's children.
func (t *Tree) Expand() {
	if n := t.Current(); n != nil && len(n.Children) > 0 {
		t.expanded[n.Path] = true
	}
}

// Collapse hides the current node's children or, when they are hidden
// already, moves to its parent.
func (t *Tree) Collapse() {
	n := t.Current()
	if n == nil {
		return
	}
	if len(n.Children) > 0 && t.IsExpanded(n) {
		t.expanded[n.Path] = false
		return
	}
	if p := t.parentOf(n); p != nil {
		t.cur = p.Path
	}
}

// Toggle expands or collapses the current node.
func (t *Tree) Toggle() {
	if n := t.Current(); n != nil && len(n.Children) > 0 {
		t.expanded[n.Path] = !t.IsExpanded(n)
	}
}

// ExpandAll expands every node of the record.
func (t *Tree) ExpandAll() {
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			if len(n.Children) > 0 {
				t.expanded[n.Path] = true
				walk(n.Children)
			}
		}
	}
	walk(t.Roots)
}

func (t *Tree) parentOf(c *Node) *Node {
	var found *Node
	var walk func(p *Node, ns []*Node)
	walk = func(p *Node, ns []*Node) {
		for _, n := range ns {
			if n == c {
				found = p
				return
			}
			walk(n, n.Children)
		}
	}
	walk(nil, t.Roots)
	return found
}

// recordKeys are the keys every record (or every FPDU and MPA record)
// has; the tree gathers them under a "record" node.
var recordKeys = map[string]bool{
	"v": true, "type": true, "frame": true, "ts": true, "conn": true, "src": true, "dst": true,
	"dir": true, "seq": true, "len": true, "frames": true, "payload_len": true,
}

// groups are the protocol nodes of an FPDU's tree, by layer.
var groups = [...]struct{ layer, title string }{
	{"mpa", "MPA"}, {"ddp", "DDP"}, {"rdmap", "RDMAP"},
}

// buildTree turns format.Fields(r) into nodes: for MPA and FPDU records a
// collapsed "record" node with the record keys and a protocol node per
// layer (MPA, DDP, RDMAP), for other records the fields as they come;
// objects and lists of objects become collapsed subtrees.
func buildTree(r *flows.Record) []*Node {
	kvs := format.Fields(r)
	if r.Type != flows.RecFPDU && r.Type != flows.RecMPA {
		return kvNodes(kvs, "")
	}
	src, dst := Endpoints(r)
	rec := &Node{Path: "record", Label: "Record: " + r.Type.String() + ", frame " + strconv.FormatUint(r.Frame, 10) +
		", conn " + strconv.Itoa(r.Conn) + ", " + src + " > " + dst, Desc: "the record's place in the capture"}
	out := []*Node{rec}
	var rest []format.KV
	for _, kv := range kvs {
		if recordKeys[kv.Key] {
			rec.Children = append(rec.Children, kvNode(kv, "", kvs))
		} else {
			rest = append(rest, kv)
		}
	}
	if r.Type == flows.RecMPA {
		var gkv, tail []format.KV
		for _, kv := range rest {
			if kv.Key == "findings" {
				tail = append(tail, kv)
			} else {
				gkv = append(gkv, kv)
			}
		}
		g := groupNode("mpa", "MPA "+mpaKindTitle(r))
		g.Children = kvNodes(gkv, "")
		out = append(out, g)
		return append(out, kvNodes(tail, "")...)
	}
	byLayer := map[string][]format.KV{}
	var tail []format.KV
	for _, kv := range rest {
		l := dissect.FieldLayer(kv.Key)
		switch l {
		case "mpa", "ddp", "rdmap":
			byLayer[l] = append(byLayer[l], kv)
		default:
			tail = append(tail, kv)
		}
	}
	for _, g := range groups {
		if kv := byLayer[g.layer]; len(kv) > 0 {
			n := groupNode(g.layer, g.title)
			n.Children = kvNodes(kv, "")
			out = append(out, n)
		}
	}
	return append(out, kvNodes(tail, "")...)
}

func mpaKindTitle(r *flows.Record) string {
	if r.MPA.Frame.Kind.String() == "reply" {
		return "Reply"
	}
	return "Request"
}

func groupNode(layer, title string) *Node {
	n := &Node{Path: layer, Name: layer, Label: title, open: true}
	if f, ok := dissect.Lookup(layer); ok {
		n.Desc, n.Ref = f.Desc, f.Ref
		n.Label += " — " + f.Desc
		if f.Ref != "" {
			n.Label += " (" + f.Ref + ")"
		}
	}
	return n
}

func kvNodes(kvs []format.KV, prefix string) []*Node {
	out := make([]*Node, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kvNode(kv, prefix, kvs))
	}
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// kvNode makes the node of kv under prefix; siblings are the keys beside
// it, which name some values (format.AppendNumber).
func kvNode(kv format.KV, prefix string, siblings []format.KV) *Node {
	path := join(prefix, kv.Key)
	n := &Node{Path: path}
	f, ok := dissect.LookupPath(path)
	if ok {
		n.Name, n.Desc, n.Ref = f.Name, f.Desc, f.Ref
	}
	v := kv.Val
	switch {
	case v.Kind == format.KObject:
		n.Label = path
		n.Children = kvNodes(v.Obj, path)
	case v.Kind == format.KList && len(v.List) > 0 && v.List[0].Kind == format.KObject:
		n.Label = path + " (" + strconv.Itoa(len(v.List)) + ")"
		for i, it := range v.List {
			ip := path + "[" + strconv.Itoa(i) + "]"
			c := &Node{Path: ip, Name: n.Name, Desc: n.Desc, Ref: n.Ref, Label: "[" + strconv.Itoa(i) + "] " + inline(it.Obj, ip)}
			c.Children = kvNodes(it.Obj, ip)
			n.Children = append(n.Children, c)
		}
	default:
		n.Label = path + ": " + number(v, path, siblings)
		if frameKeys[kv.Key] {
			n.Frames = frameValues(v)
		}
	}
	return n
}

// frameKeys are the keys whose values are frame numbers (format's field
// lists name them so).
var frameKeys = map[string]bool{
	"frame": true, "frames": true, "first_frame": true, "last_frame": true,
	"request_frame": true, "segment_frame": true,
}

// frameValues returns the frame numbers of a number or a list of them.
func frameValues(v format.Value) []uint64 {
	switch v.Kind {
	case format.KUint:
		return []uint64{v.U}
	case format.KList:
		var fs []uint64
		for _, e := range v.List {
			if e.Kind == format.KUint {
				fs = append(fs, e.U)
			}
		}
		return fs
	}
	return nil
}

// inline summarises an object's scalar values on one line.
func inline(kvs []format.KV, prefix string) string {
	var parts []string
	for _, kv := range kvs {
		if kv.Val.Kind == format.KObject || kv.Val.Kind == format.KList {
			continue
		}
		parts = append(parts, kv.Key+"="+number(kv.Val, join(prefix, kv.Key), kvs))
	}
	return strings.Join(parts, " ")
}

// number formats v as the tree shows the value of the field at path:
// numbers, and lists of them, as format.AppendNumber gives them (hex to the
// field's width, value names); the rest as Value does.
func number(v format.Value, path string, siblings []format.KV) string {
	switch {
	case v.Kind == format.KUint:
		return string(format.AppendNumber(nil, path, v.U, siblings))
	case v.Kind == format.KList && len(v.List) > 0 && v.List[0].Kind == format.KUint:
		var b []byte
		for i, e := range v.List {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = format.AppendNumber(b, path, e.U, siblings)
		}
		return string(b)
	}
	return Value(v, false)
}

// Value formats a field value for the tree: integers in decimal or, for
// hex fields, 0x-prefixed hexadecimal; octets in hex; strings with control
// characters escaped.
func Value(v format.Value, hexa bool) string {
	switch v.Kind {
	case format.KNull:
		return "null"
	case format.KUint:
		if hexa {
			return "0x" + strconv.FormatUint(v.U, 16)
		}
		return strconv.FormatUint(v.U, 10)
	case format.KInt:
		return strconv.FormatInt(v.I, 10)
	case format.KBool:
		return strconv.FormatBool(v.B)
	case format.KString:
		return Safe(v.S)
	case format.KBytes:
		if len(v.Bytes) == 0 {
			return "(none)"
		}
		s := hex.EncodeToString(v.Bytes)
		if len(s) > 64 {
			s = s[:64] + "…"
		}
		return s
	case format.KList:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = Value(e, hexa)
		}
		if len(parts) == 0 {
			return "(none)"
		}
		return strings.Join(parts, ", ")
	case format.KObject:
		return "{…}"
	}
	return ""
}

// Safe escapes what must not reach a terminal: control characters (C0,
// DEL, C1), invalid UTF-8 and bidirectional overrides, as \xNN or \u....
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == utf8.RuneError || r == '\u202e' || r == '\u200f' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString("\\x" + hex.EncodeToString([]byte{s[i]}))
		case r < 0x20 || r == 0x7f:
			b.WriteString("\\x" + hex.EncodeToString([]byte{byte(r)}))
		case (r >= 0x80 && r < 0xa0) || r == '\u202e' || r == '\u200f':
			b.WriteString("\\u" + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
