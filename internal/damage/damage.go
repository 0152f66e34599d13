package damage

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Kinds of damage, the [Variant.Kind] values.
const (
	// KindBitFlip flips 1 to 8 random bits anywhere in the file (now and
	// then only in its first 256 octets, where the headers are).
	KindBitFlip = "bitflip"
	// KindPayloadFlip flips bits, or sets octets to boundary values (0x00,
	// 0x01, 0x7f, 0x80, 0xff), inside the TCP payload of 1 to 3 packets;
	// the pcap, IP and TCP framing stays valid.
	KindPayloadFlip = "payload-flip"
	// KindPayloadRandom replaces the TCP payload of packets with random
	// octets of the same length, sometimes keeping the first 2 octets (MPA
	// ULPDU_Length), 4 octets (and the DDP and RDMAP control octets) or the
	// 16-octet MPA key, or writing a ULPDU_Length that fits the segment, so
	// that the random octets reach DDP and RDMAP.
	KindPayloadRandom = "payload-random"
	// KindHeaderFlip flips bits in a packet's link, IP or TCP header,
	// keeping the pcap framing valid.
	KindHeaderFlip = "header-flip"
	// KindTruncate cuts the file inside the file header, inside a record
	// header, inside a record's data, at a record boundary or anywhere.
	KindTruncate = "truncate"
	// KindSplice joins the head of one capture to the tail of another, each
	// cut at a record boundary or at a random offset, or concatenates two
	// whole files (file header in the middle).
	KindSplice = "splice"
	// KindReorder duplicates, swaps, reverses, moves, shuffles, drops or
	// floods (hundreds of copies of one record) records.
	KindReorder = "reorder"
	// KindAbsurdLen makes a record header lie: captured length 0xffffffff,
	// just above or at the 262144-octet limit, a little more or less than
	// the data, or an original length of 0, below the captured length or
	// huge. The record data is left as it was.
	KindAbsurdLen = "absurd-len"
	// KindSnapCut cuts records short as a small snap length would
	// (captured length below the original length), one by one or all of
	// them with the file's snap length lowered.
	KindSnapCut = "snapcut"
	// KindZeroLen inserts zero-length records (one or thousands), or
	// empties a record.
	KindZeroLen = "zero-len"
	// KindTimeBack makes timestamps go backwards: one step back, zero, all
	// reversed, random, a microsecond fraction of a second above 999999,
	// or the largest second count.
	KindTimeBack = "time-back"
	// KindNgBlockLen converts the capture to pcapng (pcapgo's NgWriter) and
	// corrupts one block's total length (leading or trailing copy): zero,
	// below the minimum, not a multiple of 4, a little too long or short,
	// huge.
	KindNgBlockLen = "pcapng-blocklen"
	// KindNgOther converts the capture to pcapng and damages it otherwise:
	// truncation, bit flips, an unknown or wrong block type, an Enhanced
	// Packet Block captured length past its block, a missing interface, an
	// unsupported link type, a second section, packet comments.
	KindNgOther = "pcapng-other"
	// KindMixed applies two to four of the structure-keeping damages above
	// in a row, and sometimes truncates the result.
	KindMixed = "mixed"
)

// Kinds returns every kind of damage, in the order [Variants] cycles
// through them.
func Kinds() []string {
	return []string{
		KindBitFlip, KindPayloadFlip, KindPayloadRandom, KindHeaderFlip,
		KindTruncate, KindSplice, KindReorder, KindAbsurdLen, KindSnapCut,
		KindZeroLen, KindTimeBack, KindNgBlockLen, KindNgOther, KindMixed,
	}
}

// Variant is one damaged capture.
type Variant struct {
	// Name identifies the variant and says what was done, e.g.
	// "0042-truncate-s03-rechdr.at1234": index, kind, source index (sNN,
	// the position in the sources slice; "sNN+sMM" for splices) and
	// details. It contains only [a-z0-9.+-] and is usable as a file name.
	Name string
	// Kind is one of the Kind constants.
	Kind string
	// Data is the damaged file.
	Data []byte
	// FileHeader is set when the damage reached the file header: the pcap
	// global header, the pcapng Section Header Block, or all of a source
	// that was not a capture to begin with. A reader may then refuse the
	// file as not a capture; any other damage must leave every record
	// before it decodable.
	FileHeader bool
}

// Variants generates n damaged variants of sources (pcap files, typically
// testdata/siw/*.pcap and testdata/synth/*.pcap), cycling through [Kinds]:
// variant i has kind Kinds()[i%len(Kinds())] unless its source cannot take
// that damage (a source that is not a pcap file only gets blind damage).
// The result depends only on seed, n and the sources. It is nil when
// sources holds no non-empty file.
func Variants(seed int64, n int, sources [][]byte) []Variant {
	g := newGenerator(sources)
	if g == nil {
		return nil
	}
	vs := make([]Variant, 0, max(n, 0))
	for i := range max(n, 0) {
		vs = append(vs, g.variant(seed, i))
	}
	return vs
}

// Generate returns variant i of [Variants](seed, n, sources) for any n > i,
// without generating the others.
func Generate(seed int64, i int, sources [][]byte) Variant {
	g := newGenerator(sources)
	if g == nil {
		return Variant{}
	}
	return g.variant(seed, i)
}

// generator holds the sources, parsed once.
type generator struct {
	srcs    [][]byte
	parsed  []*pcapFile // nil where the source is not a pcap file
	payload [][]int     // per source, the records carrying TCP payload
	good    []int       // sources that are pcap files with TCP payload
	any     []int       // non-empty sources
}

func newGenerator(sources [][]byte) *generator {
	g := &generator{srcs: sources}
	for i, s := range sources {
		p := parsePcap(s)
		g.parsed = append(g.parsed, p)
		var pr []int
		if p != nil {
			pr = p.payloadRecords()
		}
		g.payload = append(g.payload, pr)
		if len(s) > 0 {
			g.any = append(g.any, i)
		}
		if len(pr) > 0 {
			g.good = append(g.good, i)
		}
	}
	if len(g.any) == 0 {
		return nil
	}
	return g
}

// job is the variant being built.
type job struct {
	rng    *rand.Rand
	kind   string
	src    string   // source label, "s03" or "s03+s07"
	detail []string // what was done, joined with "."
	header bool
}

func (j *job) note(parts ...any) {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			b = append(b, v...)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case uint32:
			b = strconv.AppendUint(b, uint64(v), 10)
		}
	}
	j.detail = append(j.detail, string(b))
}

func srcLabel(i int) string {
	if i < 10 {
		return "s0" + strconv.Itoa(i)
	}
	return "s" + strconv.Itoa(i)
}

// maxDetail bounds the details in a name, which must stay a usable file
// name (the index in front keeps names unique).
const maxDetail = 160

func (g *generator) variant(seed int64, i int) Variant {
	kinds := Kinds()
	j := &job{rng: rand.New(rand.NewPCG(uint64(seed), uint64(i))), kind: kinds[i%len(kinds)]}
	var data []byte
	if j.kind != KindBitFlip && j.kind != KindTruncate && j.kind != KindSplice && len(g.good) == 0 {
		j.kind = KindBitFlip // structure-aware damage needs a pcap with TCP payload
	}
	switch j.kind {
	case KindBitFlip, KindTruncate, KindSplice:
		s := g.any[j.rng.IntN(len(g.any))]
		j.src = srcLabel(s)
		switch j.kind {
		case KindBitFlip:
			data = g.bitflip(j, s)
		case KindTruncate:
			data = g.truncate(j, s)
		default:
			data = g.splice(j, s)
		}
	default:
		s := g.good[j.rng.IntN(len(g.good))]
		j.src = srcLabel(s)
		data = g.structural(j, s)
	}
	name := strconv.Itoa(i)
	for len(name) < 4 {
		name = "0" + name
	}
	name += "-" + j.kind + "-" + j.src
	if len(j.detail) > 0 {
		d := strings.Join(j.detail, ".")
		if len(d) > maxDetail {
			d = d[:maxDetail] + "+more"
		}
		name += "-" + d
	}
	return Variant{Name: name, Kind: j.kind, Data: data, FileHeader: j.header}
}

// headerLen returns the length of source s's file header; all of it for a
// source that is not a pcap file.
func (g *generator) headerLen(s int) int {
	if g.parsed[s] == nil {
		return len(g.srcs[s])
	}
	return pcapFileHdr
}

// flip flips k random bits of b[lo:hi] and reports whether one fell below
// hdr.
func (j *job) flip(b []byte, lo, hi, k, hdr int) {
	if hi <= lo {
		return
	}
	for range k {
		pos := lo + j.rng.IntN(hi-lo)
		b[pos] ^= 1 << j.rng.IntN(8)
		if pos < hdr {
			j.header = true
		}
		j.note("at", pos)
	}
}

func (g *generator) bitflip(j *job, s int) []byte {
	data := append([]byte(nil), g.srcs[s]...)
	hi := len(data)
	if j.rng.IntN(100) < 15 {
		hi = min(hi, 256)
		j.note("early")
	}
	j.flip(data, 0, hi, 1+j.rng.IntN(8), g.headerLen(s))
	return data
}

func (g *generator) truncate(j *job, s int) []byte {
	src, f := g.srcs[s], g.parsed[s]
	hdr := g.headerLen(s)
	var at int
	mode := j.rng.IntN(100)
	if f == nil || len(f.recs) == 0 {
		mode = 99
	}
	offs := []int(nil)
	if f != nil {
		offs = f.recordOffsets()
	}
	switch {
	case mode < 5:
		j.note("filehdr")
		at = j.rng.IntN(min(hdr, len(src)))
	case mode < 35:
		j.note("rechdr")
		at = offs[j.rng.IntN(len(f.recs))] + 1 + j.rng.IntN(pcapRecordHdr-1)
	case mode < 75:
		r := j.rng.IntN(len(f.recs))
		if n := len(f.recs[r].data); n >= 2 {
			j.note("recdata")
			at = offs[r] + pcapRecordHdr + 1 + j.rng.IntN(n-1)
		} else {
			j.note("rechdr")
			at = offs[r] + 1 + j.rng.IntN(pcapRecordHdr-1)
		}
	case mode < 80:
		j.note("boundary")
		at = offs[j.rng.IntN(len(offs))]
	default:
		j.note("anywhere")
		at = j.rng.IntN(len(src))
	}
	at = min(at, len(src))
	if at < hdr {
		j.header = true
	}
	j.note("at", at)
	return append([]byte(nil), src[:at]...)
}

func (g *generator) splice(j *job, a int) []byte {
	b := g.any[j.rng.IntN(len(g.any))]
	if len(g.any) > 1 {
		for b == a {
			b = g.any[j.rng.IntN(len(g.any))]
		}
	}
	j.src = srcLabel(a) + "+" + srcLabel(b)
	sa, sb := g.srcs[a], g.srcs[b]
	fa, fb := g.parsed[a], g.parsed[b]
	// head: where A is cut; tail: where B resumes.
	var head, tail int
	boundary := func(f *pcapFile) int {
		offs := f.recordOffsets()
		return offs[j.rng.IntN(len(offs))]
	}
	randomCut := func(src []byte, f *pcapFile) int {
		if f != nil && len(src) > pcapFileHdr && j.rng.IntN(100) >= 5 {
			return pcapFileHdr + j.rng.IntN(len(src)-pcapFileHdr)
		}
		return j.rng.IntN(len(src) + 1)
	}
	mode := j.rng.IntN(5)
	if fa == nil || fb == nil {
		mode = 3
	}
	switch mode {
	case 0:
		j.note("rec-rec")
		head, tail = boundary(fa), boundary(fb)
		// B's records start after B's header.
	case 1:
		j.note("raw-rec")
		head, tail = randomCut(sa, fa), boundary(fb)
	case 2:
		j.note("rec-raw")
		head, tail = boundary(fa), j.rng.IntN(len(sb)+1)
	case 3:
		j.note("raw-raw")
		head, tail = randomCut(sa, fa), j.rng.IntN(len(sb)+1)
	default:
		j.note("concat")
		head, tail = len(sa), 0
	}
	if head < g.headerLen(a) || fa == nil {
		j.header = true
	}
	j.note("head", head)
	j.note("tail", tail)
	out := make([]byte, 0, head+len(sb)-tail)
	out = append(out, sa[:head]...)
	return append(out, sb[tail:]...)
}

// structural applies a structure-keeping damage of kind j.kind to source s
// (a pcap file with TCP payload).
func (g *generator) structural(j *job, s int) []byte {
	f := g.parsed[s].clone()
	switch j.kind {
	case KindPayloadFlip:
		j.payloadFlip(f)
	case KindPayloadRandom:
		j.payloadRandom(f)
	case KindHeaderFlip:
		j.headerFlip(f)
	case KindReorder:
		j.reorder(f)
	case KindAbsurdLen:
		j.absurdLen(f)
	case KindSnapCut:
		j.snapCut(f)
	case KindZeroLen:
		j.zeroLen(f)
	case KindTimeBack:
		j.timeBack(f)
	case KindNgBlockLen:
		return j.ngBlockLen(f)
	case KindNgOther:
		return g.ngOther(j, f)
	case KindMixed:
		return j.mixed(f)
	}
	return f.bytes()
}

// pick returns 1 to n distinct-ish random indexes of records carrying
// payload in f (recomputed, as earlier damage may have moved records).
func (j *job) pickPayload(f *pcapFile, n int) []int {
	pr := f.payloadRecords()
	if len(pr) == 0 {
		return nil
	}
	k := 1 + j.rng.IntN(n)
	out := make([]int, 0, k)
	for range k {
		out = append(out, pr[j.rng.IntN(len(pr))])
	}
	return out
}

var boundaryOctets = [...]byte{0x00, 0x01, 0x7f, 0x80, 0xff}

func (j *job) payloadFlip(f *pcapFile) {
	for _, r := range j.pickPayload(f, 3) {
		data := f.own(r)
		start, end, _ := tcpPayload(f.link, data)
		j.note("f", r+1)
		for range 1 + j.rng.IntN(4) {
			pos := start + j.rng.IntN(end-start)
			if j.rng.IntN(100) < 30 {
				data[pos] = boundaryOctets[j.rng.IntN(len(boundaryOctets))]
				j.note("set", pos-start)
			} else {
				data[pos] ^= 1 << j.rng.IntN(8)
				j.note("flip", pos-start)
			}
		}
	}
}

// ulpduLenFor returns an MPA ULPDU_Length for which an FPDU (length field,
// ULPDU, pad to 4, CRC) is exactly n octets, or n-6 when there is none
// (RFC 5044 §4.1).
func ulpduLenFor(n int) int {
	for l := n - 6; l >= n-9 && l >= 0; l-- {
		if pad := (4 - (2+l)%4) % 4; 2+l+pad+4 == n {
			return l
		}
	}
	return max(n-6, 0)
}

func (j *job) payloadRandom(f *pcapFile) {
	recs := j.pickPayload(f, 3)
	if pr := f.payloadRecords(); len(pr) > 0 && j.rng.IntN(100) < 15 {
		// A run of consecutive payload packets.
		a := j.rng.IntN(len(pr))
		recs = pr[a:min(len(pr), a+2+j.rng.IntN(20))]
	}
	mode := j.rng.IntN(5)
	for _, r := range recs {
		data := f.own(r)
		start, end, _ := tcpPayload(f.link, data)
		pl := data[start:end]
		keep := 0
		switch mode {
		case 1:
			keep = 2
		case 2:
			keep = 4
		case 3:
			if len(pl) >= 16 && string(pl[:7]) == "MPA ID " {
				keep = 16
			}
		}
		keep = min(keep, len(pl))
		for k := keep; k < len(pl); k++ {
			pl[k] = byte(j.rng.Uint32())
		}
		if mode == 4 && len(pl) >= 2 {
			binary.BigEndian.PutUint16(pl, uint16(ulpduLenFor(len(pl))))
		}
		j.note("f", r+1)
	}
	j.note([]string{"rand", "keep2", "keep4", "keepkey", "mpalen"}[mode])
}

func (j *job) headerFlip(f *pcapFile) {
	for _, r := range j.pickPayload(f, 2) {
		start, _, ok := tcpPayload(f.link, f.recs[r].data)
		if !ok {
			continue // picked twice, and the first flips broke its headers
		}
		data := f.own(r)
		j.note("f", r+1)
		for range 1 + j.rng.IntN(3) {
			pos := j.rng.IntN(start)
			data[pos] ^= 1 << j.rng.IntN(8)
			j.note("at", pos)
		}
	}
}

// insert puts rs into f's records before index i.
func (f *pcapFile) insert(i int, rs ...record) {
	f.recs = append(f.recs[:i], append(rs, f.recs[i:]...)...)
}

func (j *job) reorder(f *pcapFile) {
	n := len(f.recs)
	i := j.rng.IntN(n)
	switch mode := j.rng.IntN(8); mode {
	case 0:
		j.note("dup.f", i+1)
		f.insert(i+1, f.recs[i])
	case 1:
		k := min(1+j.rng.IntN(10), n-i)
		j.note("duprange.f", i+1, "+", k)
		f.insert(i+k, append([]record(nil), f.recs[i:i+k]...)...)
	case 2:
		k := j.rng.IntN(n)
		j.note("swap.f", i+1, "+f", k+1)
		f.recs[i], f.recs[k] = f.recs[k], f.recs[i]
	case 3:
		k := min(2+j.rng.IntN(15), n-i)
		j.note("reverse.f", i+1, "+", k)
		w := f.recs[i : i+k]
		for a, b := 0, len(w)-1; a < b; a, b = a+1, b-1 {
			w[a], w[b] = w[b], w[a]
		}
	case 4:
		r := f.recs[i]
		f.recs = append(f.recs[:i], f.recs[i+1:]...)
		k := j.rng.IntN(len(f.recs) + 1)
		j.note("move.f", i+1, "-to", k+1)
		f.insert(k, r)
	case 5:
		k := min(2+j.rng.IntN(31), n-i)
		j.note("shuffle.f", i+1, "+", k)
		w := f.recs[i : i+k]
		j.rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
	case 6:
		k := min(1+j.rng.IntN(5), n-i)
		j.note("drop.f", i+1, "+", k)
		f.recs = append(f.recs[:i], f.recs[i+k:]...)
	default:
		// Flood: hundreds of copies of one record, at most 4 MiB added.
		pr := f.payloadRecords()
		if len(pr) > 0 && j.rng.IntN(2) == 0 {
			i = pr[j.rng.IntN(len(pr))]
		}
		c := 200 + j.rng.IntN(1800)
		c = max(1, min(c, (4<<20)/(pcapRecordHdr+len(f.recs[i].data))))
		j.note("flood.f", i+1, "x", c)
		cp := make([]record, c)
		for k := range cp {
			cp[k] = f.recs[i]
		}
		f.insert(i+1, cp...)
	}
}

func (j *job) absurdLen(f *pcapFile) {
	i := j.rng.IntN(len(f.recs))
	r := &f.recs[i]
	n := uint32(len(r.data))
	j.note("f", i+1)
	switch mode := j.rng.IntN(10); mode {
	case 0:
		r.caplen = 0xffffffff
	case 1:
		r.caplen = maxRecordLength + 1 + uint32(j.rng.IntN(1000))
	case 2:
		r.caplen = maxRecordLength
	case 3:
		r.caplen = n + 1 + uint32(j.rng.IntN(64))
	case 4:
		if n > 0 {
			r.caplen = n - 1 - uint32(j.rng.IntN(int(min(n, 64))))
		} else {
			r.caplen = 1
		}
	case 5:
		r.origlen = 0
	case 6:
		r.origlen = n - 1
	case 7:
		r.origlen = 0xffffffff
	case 8:
		r.origlen = maxRecordLength * 4
	default:
		r.origlen = j.rng.Uint32()
	}
	j.note("cap", r.caplen, "-orig", r.origlen)
}

func (j *job) snapCut(f *pcapFile) {
	if j.rng.IntN(4) == 0 {
		// A small snap length for the whole file.
		snap := uint32(14 + j.rng.IntN(200))
		hdr := append([]byte(nil), f.hdr...)
		f.order.PutUint32(hdr[16:20], snap)
		f.hdr = hdr
		for i := range f.recs {
			r := &f.recs[i]
			if uint32(len(r.data)) > snap {
				r.data = r.data[:snap]
				r.caplen = snap
			}
		}
		j.note("snaplen", snap)
		return
	}
	for _, i := range j.pickPayload(f, 10) {
		r := &f.recs[i]
		if len(r.data) == 0 {
			continue
		}
		cut := j.rng.IntN(len(r.data))
		r.data = r.data[:cut]
		r.caplen = uint32(cut)
		j.note("f", i+1, "to", cut)
	}
}

func (j *job) zeroLen(f *pcapFile) {
	i := j.rng.IntN(len(f.recs))
	ts := record{sec: f.recs[i].sec, frac: f.recs[i].frac, off: -1}
	switch mode := j.rng.IntN(4); mode {
	case 0:
		k := 1 + j.rng.IntN(5)
		j.note("insert", k)
		for range k {
			at := j.rng.IntN(len(f.recs) + 1)
			j.note("f", at+1)
			f.insert(at, ts)
		}
	case 1:
		j.note("empty.f", i+1)
		f.recs[i].data, f.recs[i].caplen = nil, 0
	case 2:
		j.note("wirezero.f", i+1)
		f.recs[i].data, f.recs[i].caplen, f.recs[i].origlen = nil, 0, 0
	default:
		k := 500 + j.rng.IntN(4500)
		j.note("many.f", i+1, "x", k)
		zs := make([]record, k)
		for z := range zs {
			zs[z] = ts
		}
		f.insert(i, zs...)
	}
}

func (j *job) timeBack(f *pcapFile) {
	n := len(f.recs)
	i := j.rng.IntN(n)
	switch mode := j.rng.IntN(6); mode {
	case 0:
		back := uint32(1 + j.rng.IntN(86400))
		if i == 0 && n > 1 {
			i = 1
		}
		prev := f.recs[max(i-1, 0)].sec
		f.recs[i].sec = prev - min(prev, back)
		j.note("step.f", i+1, "-", back)
	case 1:
		f.recs[i].sec, f.recs[i].frac = 0, 0
		j.note("zero.f", i+1)
	case 2:
		for a, b := 0, n-1; a < b; a, b = a+1, b-1 {
			f.recs[a].sec, f.recs[b].sec = f.recs[b].sec, f.recs[a].sec
			f.recs[a].frac, f.recs[b].frac = f.recs[b].frac, f.recs[a].frac
		}
		j.note("reverse")
	case 3:
		for k := range f.recs {
			f.recs[k].sec, f.recs[k].frac = j.rng.Uint32(), j.rng.Uint32()%1000000
		}
		j.note("random")
	case 4:
		f.recs[i].frac = 1000000 + j.rng.Uint32()%(0xffffffff-1000000)
		j.note("badfrac.f", i+1)
	default:
		f.recs[i].sec = 0xffffffff
		j.note("max.f", i+1)
	}
}

// ngBlockLen converts f to pcapng and corrupts a block's total length.
func (j *job) ngBlockLen(f *pcapFile) []byte {
	data := f.toPcapng(func(int) bool { return j.rng.IntN(10) == 0 })
	bs := ngBlocks(data)
	if len(bs) < 3 {
		return data
	}
	var b block
	switch p := j.rng.IntN(10); {
	case p == 0:
		b = bs[0]
		j.header = true
		j.note("shb")
	case p == 1:
		b = bs[1]
		j.note("idb")
	default:
		k := 2 + j.rng.IntN(len(bs)-2)
		b = bs[k]
		j.note("epb", k-1)
	}
	at := b.off + 4
	if j.rng.IntN(5) == 0 {
		at = b.off + b.len - 4
		j.note("trailer")
	}
	var v uint32
	switch mode := j.rng.IntN(12); mode {
	case 0:
		v = 0
	case 1:
		v = 4
	case 2:
		v = 8
	case 3:
		v = 12
	case 4:
		v = uint32(b.len - 4)
	case 5:
		v = uint32(b.len + 4)
	case 6:
		v = uint32(b.len + 1 + j.rng.IntN(3))
	case 7:
		v = 0xfffffffc
	case 8:
		v = 0x80000000
	case 9:
		v = uint32(b.len + 4*(2+j.rng.IntN(1024)))
	case 10:
		v = uint32(b.len - 4*(1+j.rng.IntN(max(1, b.len/4-3))))
	default:
		v = j.rng.Uint32()
	}
	binary.LittleEndian.PutUint32(data[at:], v)
	j.note("len", v)
	return data
}

// ngOther converts f to pcapng and damages it in one of several ways.
func (g *generator) ngOther(j *job, f *pcapFile) []byte {
	mode := j.rng.IntN(11)
	if mode == 9 {
		// Damage the payload first; the pcapng framing stays valid.
		j.note("payload")
		j.payloadRandom(f)
	}
	data := f.toPcapng(func(int) bool { return mode == 10 || j.rng.IntN(10) == 0 })
	bs := ngBlocks(data)
	if len(bs) < 3 {
		return data
	}
	shb := bs[0].len
	epb := func() block {
		k := 2 + j.rng.IntN(len(bs)-2)
		j.note("epb", k-1)
		return bs[k]
	}
	switch mode {
	case 0:
		at := j.rng.IntN(len(data))
		j.note("trunc.at", at)
		j.header = at < shb
		return data[:at]
	case 1:
		k := 1 + j.rng.IntN(8)
		j.flip(data, 0, len(data), k, shb)
	case 2:
		b := epb()
		types := []uint32{0, 2, 3, 4, 5, ngSHB, 0x00000bad, 0x40000bad, 0x80000001, j.rng.Uint32()}
		t := types[j.rng.IntN(len(types))]
		binary.LittleEndian.PutUint32(data[b.off:], t)
		j.note("type", t)
	case 3:
		b := epb()
		caps := []uint32{uint32(b.len), uint32(b.len - 28), maxRecordLength + 1, 0xffffffff, 0, j.rng.Uint32()}
		c := caps[j.rng.IntN(len(caps))]
		binary.LittleEndian.PutUint32(data[b.off+20:], c)
		j.note("caplen", c)
	case 4:
		b := epb()
		ids := []uint32{1, 2, 7, 0xffffffff}
		id := ids[j.rng.IntN(len(ids))]
		binary.LittleEndian.PutUint32(data[b.off+8:], id)
		j.note("ifid", id)
	case 5:
		lts := []uint32{147, 0xffff, 9, 105, 0xffffffff}
		lt := lts[j.rng.IntN(len(lts))]
		binary.LittleEndian.PutUint16(data[bs[1].off+8:], uint16(lt))
		j.note("idblink", lt&0xffff)
	case 6:
		j.note("noidb")
		return append(append([]byte(nil), data[:bs[1].off]...), data[bs[1].off+bs[1].len:]...)
	case 7:
		// A second section: another good source converted and appended.
		o := g.good[j.rng.IntN(len(g.good))]
		j.src += "+" + srcLabel(o)
		j.note("twosections")
		return append(data, g.parsed[o].toPcapng(nil)...)
	case 8:
		// Reorder blocks: swap two Enhanced Packet Blocks' positions by
		// exchanging their bytes when equally long, else duplicate one.
		b := epb()
		j.note("dupblock")
		out := append([]byte(nil), data[:b.off+b.len]...)
		out = append(out, data[b.off:b.off+b.len]...)
		return append(out, data[b.off+b.len:]...)
	case 9:
	default:
		j.note("comments")
	}
	return data
}

// mixed applies two to four structure-keeping damages, then sometimes
// truncates.
func (j *job) mixed(f *pcapFile) []byte {
	ops := []struct {
		name string
		fn   func(*pcapFile)
	}{
		{"pflip", j.payloadFlip},
		{"prand", j.payloadRandom},
		{"hflip", j.headerFlip},
		{"reorder", j.reorder},
		{"snapcut", j.snapCut},
		{"zero", j.zeroLen},
		{"time", j.timeBack},
		{"abslen", j.absurdLen},
	}
	for range 2 + j.rng.IntN(3) {
		op := ops[j.rng.IntN(len(ops))]
		if len(f.recs) == 0 || (op.name != "reorder" && op.name != "zero" && op.name != "time" &&
			op.name != "abslen" && len(f.payloadRecords()) == 0) {
			continue
		}
		j.note(op.name)
		op.fn(f)
	}
	data := f.bytes()
	if j.rng.IntN(100) < 30 && len(data) > pcapFileHdr {
		at := pcapFileHdr + j.rng.IntN(len(data)-pcapFileHdr)
		j.note("trunc.at", at)
		data = data[:at]
	}
	return data
}
