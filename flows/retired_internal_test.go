package flows

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
)

// connRecords returns the conn records of every bundled capture.
func connRecords(t testing.TB) []*Record {
	t.Helper()
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	if len(files) < 20 {
		t.Fatalf("only %d bundled captures found", len(files))
	}
	var recs []*Record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src, err := capture.NewSource(bytes.NewReader(data), f)
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(Options{}, func(r *Record) {
			if r.Type == RecConn && r.Summary != nil {
				r.order = 0 // as retire finds it (Decoder.push)
				recs = append(recs, r)
			}
		})
		var p capture.Packet
		for src.NextInto(&p) == nil {
			d.Packet(&p)
		}
		d.Close()
	}
	return recs
}

// filled sets every field of the struct v points to, and of the structs it
// points to, to a value that differs from the zero value and from the
// other fields' (seed counts the values given), so that a field the
// packing forgets is seen.
func filled(t *testing.T, v reflect.Value, seed *int) {
	for i := range v.NumField() {
		f := v.Field(i)
		*seed++
		n := *seed
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64: // time.Duration too
			f.SetInt(int64(-n * 1000003))
		case reflect.Uint8, reflect.Uint16:
			f.SetUint(uint64(n))
		case reflect.Uint64:
			f.SetUint(uint64(n) << 40)
		case reflect.String:
			f.SetString("value " + string(rune('a'+n%26)))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			filled(t, f.Elem(), seed)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[TCPHealth]() {
				filled(t, f, seed)
				continue
			}
			if f.Type() != reflect.TypeFor[netip.AddrPort]() {
				t.Fatalf("field %s: a struct the test does not know", v.Type().Field(i).Name)
			}
			a := netip.AddrFrom4([4]byte{10, 0, byte(n), 1})
			if n%2 == 0 {
				a = netip.MustParseAddr("2001:db8::1").Next()
			}
			f.Set(reflect.ValueOf(netip.AddrPortFrom(a, uint16(n*100))))
		default:
			t.Fatalf("field %s: kind %v the test does not fill", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestPackConn: a retired connection's conn record, packed (retired.go),
// unpacks to the record it was: the conn records of every bundled
// capture, and one with every field of ConnSummary and Interop set (a
// field added to them and not to the packing fails it). A packed record
// cut short, or any octets at all, unpack with an error and no panic.
func TestPackConn(t *testing.T) {
	var s ConnSummary
	seed := 0
	filled(t, reflect.ValueOf(&s).Elem(), &seed)
	full := &Record{Type: RecConn, Frame: 1 << 33, TS: time.Unix(1700000000, 123456789).UTC(), Conn: 7, Summary: &s}
	swapped := s
	swapped.A, swapped.B = s.Responder, s.Initiator
	same := s
	same.A, same.B = s.Initiator, s.Responder
	recs := append(connRecords(t), full,
		&Record{Type: RecConn, Frame: 3, Conn: 2, Summary: &ConnSummary{DDPVersion: -1}},
		&Record{Type: RecConn, Frame: 4, Conn: 3, Summary: &swapped},
		&Record{Type: RecConn, Frame: 5, Conn: 4, Summary: &same})
	// The string table of a Decoder, and one full already, whose
	// strings are written out.
	var strs []string
	full256 := make([]string, maxPackStrs)
	for i := range full256 {
		full256[i] = fmt.Sprint("other ", i)
	}
	var b []byte
	for i, r := range recs {
		if !packable(r) {
			t.Fatalf("conn record of connection %d not packable", r.Conn)
		}
		table := &strs
		if i%2 == 1 {
			table = &full256
		}
		at := len(b)
		b = packConn(b, r, table)
		got, err := unpackConn(b[at:], *table)
		if err != nil {
			t.Fatalf("connection %d: %v", r.Conn, err)
		}
		// The TCP stream is set as the record is emitted, after it is
		// unpacked (releaseLazy).
		got.stream = r.stream
		if !reflect.DeepEqual(got, r) {
			t.Errorf("connection %d: unpacked\n%+v %+v\nwant\n%+v %+v", r.Conn, got, got.Summary, r, r.Summary)
		}
	}
	t.Logf("%d conn records packed in %d octets", len(recs), len(b))
	if len(recs) < 40 {
		t.Errorf("only %d conn records", len(recs))
	}

	if len(strs) > 20 || len(full256) != maxPackStrs {
		t.Errorf("string tables of %d and %d", len(strs), len(full256))
	}
	for _, table := range [][]string{strs, full256} {
		one := packConn(nil, full, &table)
		for n := range len(one) {
			if _, err := unpackConn(one[:n], table); err == nil {
				t.Errorf("the packed record cut to %d of its %d octets unpacks without an error", n, len(one))
			}
		}
	}
	if _, err := unpackConn(packConn(nil, full, &strs), nil); err == nil {
		t.Error("a packed record unpacks without its string table")
	}

	zoned := *full
	zs := s
	zs.A = netip.AddrPortFrom(netip.MustParseAddr("fe80::1%eth0"), 1)
	zoned.Summary = &zs
	if packable(&zoned) {
		t.Error("a record with a zoned address is packable")
	}
	fpdu := *full
	fpdu.FPDU = &FPDURecord{}
	if packable(&fpdu) {
		t.Error("a conn record with an FPDU is packable")
	}
}

// FuzzUnpackConn: any octets unpack without a panic.
func FuzzUnpackConn(f *testing.F) {
	var s ConnSummary
	s.State, s.DDPVersion = "reset", 1
	s.A = netip.MustParseAddrPort("10.0.0.1:4000")
	s.Interop = &Interop{Initiator: "ietf", Row: "2"}
	var strs []string
	f.Add(packConn(nil, &Record{Type: RecConn, Frame: 9, TS: time.Unix(5, 6).UTC(), Summary: &s}, &strs))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _ := unpackConn(b, strs)
		if r == nil || r.Summary == nil {
			t.Fatal("no record")
		}
	})
}
