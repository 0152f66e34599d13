package synth_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

var updateExt = flag.Bool("update-ext", false, "rewrite ../testdata/synthext from the generator")

// extDir holds the committed samples of the other transports. They are
// not in testdata/synth, whose files the iWARP tests read as MPA captures.
const extDir = "../testdata/synthext"

func genExt(t testing.TB, name string, seed int64) (pcap, truth []byte) {
	t.Helper()
	s, ok := synth.NamedExt(name, seed)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	var p, tr bytes.Buffer
	if _, err := s.Generate(&p, &tr); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p.Bytes(), tr.Bytes()
}

// decodeJSON runs the pipeline over a capture and returns every record as
// iwarpdump -T jsonl writes it, parsed.
func decodeJSON(t testing.TB, pcap []byte) []map[string]any {
	t.Helper()
	src, err := capture.NewSource(bytes.NewReader(pcap), "ext")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	dec := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
		out = append(out, parseJSON(t, format.AppendJSON(nil, format.Fields(r))))
	})
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dec.Packet(&p)
	}
	dec.Close()
	return out
}

func parseJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// lookup finds a dotted path in a decoded record: a flat key ("ddp.t") or
// nested objects ("sctp" then "tsn").
func lookup(m map[string]any, path string) (any, bool) {
	if v, ok := m[path]; ok {
		return v, true
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		if sub, ok := m[path[:i]].(map[string]any); ok {
			if v, ok := lookup(sub, path[i+1:]); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// flatten lists the leaves of a truth record by dotted path.
func flatten(prefix string, v any, out map[string]any) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	out[prefix] = v
}

func findingCodes(v any) []string {
	var codes []string
	l, _ := v.([]any)
	for _, f := range l {
		if m, ok := f.(map[string]any); ok {
			codes = append(codes, fmt.Sprint(m["code"]))
		}
	}
	sort.Strings(codes)
	return codes
}

// compareExt checks every truth record against the decode: the record of
// the same type at the same frame (conn records: of the same connection)
// must hold every key of the truth with the same value, and carry exactly
// the findings the truth lists; no cm, ddp or sctp_session record may be
// decoded that the truth does not have.
func compareExt(t *testing.T, name string, truth []byte, got []map[string]any) {
	t.Helper()
	byKey := map[string]map[string]any{}
	counts := map[string]int{}
	for _, r := range got {
		typ := fmt.Sprint(r["type"])
		k := typ + "@" + fmt.Sprint(r["frame"])
		if typ == "conn" {
			k = "conn#" + fmt.Sprint(r["conn"])
		}
		if typ == "cm" || typ == "ddp" || typ == "sctp_session" {
			counts[typ]++
		}
		if _, dup := byKey[k]; dup && typ != "conn" && typ != "message" && typ != "finding" {
			t.Errorf("%s: two %s records at frame %v", name, typ, r["frame"])
		}
		byKey[k] = r
	}
	sc := bufio.NewScanner(bytes.NewReader(truth))
	sc.Buffer(nil, 1<<20)
	want := map[string]int{}
	for sc.Scan() {
		tr := parseJSON(t, sc.Bytes())
		typ := fmt.Sprint(tr["type"])
		k := typ + "@" + fmt.Sprint(tr["frame"])
		if typ == "conn" {
			k = "conn#" + fmt.Sprint(tr["conn"])
		} else {
			want[typ]++
		}
		r, ok := byKey[k]
		if !ok {
			t.Errorf("%s: no decoded record for truth %s", name, sc.Text())
			continue
		}
		leaves := map[string]any{}
		flatten("", tr, leaves)
		for path, w := range leaves {
			if path == "v" || strings.HasPrefix(path, "findings") {
				continue
			}
			g, ok := lookup(r, path)
			if !ok {
				if strings.HasSuffix(path, "rsvd") && fmt.Sprint(w) == "0" {
					continue // written only when non-zero
				}
				t.Errorf("%s: %s frame %v: key %s missing (truth %v)", name, typ, tr["frame"], path, w)
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s frame %v conn %v: %s = %v, truth %v", name, typ, tr["frame"], tr["conn"], path, g, w)
			}
		}
		if typ != "conn" {
			if g, w := findingCodes(r["findings"]), findingCodes(tr["findings"]); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s frame %v: findings %v, truth %v", name, typ, tr["frame"], g, w)
			}
		}
	}
	for typ, n := range counts {
		if n != want[typ] {
			t.Errorf("%s: %d %s records decoded, truth has %d", name, n, typ, want[typ])
		}
	}
}

// TestExtDecodeMatchesTruth decodes every scenario of the other transports
// with several seeds and compares with the generator's ground truth.
func TestExtDecodeMatchesTruth(t *testing.T) {
	for _, name := range synth.ExtNames() {
		for _, seed := range []int64{1, 2, 77} {
			t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
				p, tr := genExt(t, name, seed)
				compareExt(t, name, tr, decodeJSON(t, p))
			})
		}
	}
}

// TestExtDeterministic: the same seed gives the same octets.
func TestExtDeterministic(t *testing.T) {
	for _, name := range synth.ExtNames() {
		p1, t1 := genExt(t, name, 5)
		p2, t2 := genExt(t, name, 5)
		if !bytes.Equal(p1, p2) || !bytes.Equal(t1, t2) {
			t.Errorf("%s: not deterministic", name)
		}
		if synth.DescribeExt(name) == "" {
			t.Errorf("%s: no description", name)
		}
	}
	if _, ok := synth.NamedExt("nope", 1); ok {
		t.Error("unknown scenario found")
	}
}

// TestExtGolden checks the committed samples (run with -update-ext to
// rewrite them).
func TestExtGolden(t *testing.T) {
	for _, name := range synth.ExtNames() {
		p, tr := genExt(t, name, 1)
		files := map[string][]byte{name + ".pcap": p, name + ".truth.jsonl": tr}
		for f, want := range files {
			path := filepath.Join(extDir, f)
			if *updateExt {
				if err := os.MkdirAll(extDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./synth -run TestExtGolden -update-ext)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the generator's output", path)
			}
		}
	}
}

// tsharkColumns runs tshark on a capture and returns, per frame number, the
// requested fields (occurrences joined by ',').
func tsharkColumns(t *testing.T, tshark string, pcap []byte, extra []string, fields ...string) map[string][]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.pcap")
	if err := os.WriteFile(path, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-r", path}, extra...)
	args = append(args, "-T", "fields", "-E", "occurrence=a", "-e", "frame.number")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	res := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		cols := strings.Split(line, "\t")
		for len(cols) <= len(fields) {
			cols = append(cols, "")
		}
		res[cols[0]] = cols[1:]
	}
	return res
}

func truthRecords(t *testing.T, truth []byte) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(truth)), "\n") {
		out = append(out, parseJSON(t, []byte(line)))
	}
	return out
}

// TestExtTshark has Wireshark decode the generated captures: its InfiniBand
// dissector must see the CM messages the truth lists (attribute, transaction
// ID, communication IDs, QPNs, reject reason, IP CM port), and its SCTP
// dissector the PPIDs and TSNs, with every CRC32c good.
func TestExtTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	attr := map[string]string{"req": "0x0010", "mra": "0x0011", "rej": "0x0012", "rep": "0x0013", "rtu": "0x0014",
		"dreq": "0x0015", "drep": "0x0016", "sidr_req": "0x0017", "sidr_rep": "0x0018"}
	for _, name := range synth.ExtNames() {
		if strings.HasPrefix(name, "ib-") {
			continue // native InfiniBand: TestIBNativeTshark
		}
		p, tr := genExt(t, name, 3)
		if strings.HasPrefix(name, "roce") {
			cols := tsharkColumns(t, tshark, p, nil, "infiniband.mad.attributeid", "infiniband.mad.transactionid",
				"infiniband.cm.req", "infiniband.cm.rej.reason", "infiniband.cm.req.ip_cm.sport",
				"infiniband.cm.req.localqpn", "infiniband.cm.rep.localqpn", "infiniband.cm.rep.remotecommid")
			for _, r := range truthRecords(t, tr) {
				if r["type"] != "cm" {
					continue
				}
				c := cols[fmt.Sprint(r["frame"])]
				num := func(k string) uint64 { n, _ := r[k].(json.Number).Int64(); return uint64(n) }
				want := []string{attr[fmt.Sprint(r["msg"])], fmt.Sprintf("0x%016x", num("transaction_id"))}
				got := c[:2]
				switch r["msg"] {
				case "req":
					want = append(want, fmt.Sprintf("0x%08x", num("local_comm_id")), fmt.Sprintf("0x%06x", num("qpn")))
					got = append(got, c[2], c[5])
					if ipcm, ok := r["ip_cm"].(map[string]any); ok {
						n, _ := ipcm["port"].(json.Number).Int64()
						want, got = append(want, fmt.Sprintf("0x%04x", n)), append(got, c[4])
					}
				case "rej":
					want, got = append(want, fmt.Sprintf("0x%04x", num("reason"))), append(got, c[3])
				case "rep":
					want = append(want, fmt.Sprintf("0x%06x", num("qpn")), fmt.Sprintf("0x%08x", num("remote_comm_id")))
					got = append(got, c[6], c[7])
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s frame %v (%v): tshark %v, truth %v", name, r["frame"], r["msg"], got, want)
				}
			}
			continue
		}
		cols := tsharkColumns(t, tshark, p, []string{"-o", "sctp.checksum:CRC-32C"},
			"sctp.checksum.status", "sctp.data_payload_proto_id", "sctp.data_tsn_raw")
		for f, c := range cols {
			if c[0] != "1" {
				t.Errorf("%s frame %s: checksum status %q", name, f, c[0])
			}
		}
		n := 0
		for _, r := range truthRecords(t, tr) {
			if r["type"] != "ddp" && r["type"] != "sctp_session" {
				continue
			}
			n++
			s := r["sctp"].(map[string]any)
			c := cols[fmt.Sprint(r["frame"])]
			if want := []string{fmt.Sprint(s["ppid"]), fmt.Sprint(s["tsn"])}; !reflect.DeepEqual(c[1:], want) {
				t.Errorf("%s frame %v: tshark PPID/TSN %v, truth %v", name, r["frame"], c[1:], want)
			}
		}
		if n == 0 {
			t.Errorf("%s: no DDP records", name)
		}
	}
}
