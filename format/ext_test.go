package format_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// extCaptures are the captures of the other transports: real RoCEv2 CM
// (rxe) and the generated samples.
func extCaptures(t *testing.T) []string {
	a, _ := filepath.Glob("../testdata/rxe/*.pcap")
	b, _ := filepath.Glob("../testdata/synthext/*.pcap")
	files := append(a, b...)
	if len(files) < 5 {
		t.Fatalf("only %d captures of the other transports", len(files))
	}
	return files
}

// extSchema is docs/jsonl.schema.json, which holds the records of the other
// transports (cm, ddp, sctp_session, and conn with a transport).
func extSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("../docs/jsonl.schema.json")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return sch
}

// TestExtSchema validates every record of the other transports against the
// schema with the proposed additions, and the iWARP captures too (the conn
// branch changed).
func TestExtSchema(t *testing.T) {
	sch := extSchema(t)
	siw, _ := filepath.Glob("../testdata/siw/*.pcap")
	types := map[string]int{}
	for _, path := range append(extCaptures(t), siw...) {
		for i, line := range bytes.Split(bytes.TrimSpace(jsonlOf(testutil.Decode(t, path, flows.Options{}))), []byte("\n")) {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				t.Fatalf("%s line %d: %v", path, i+1, err)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("%s line %d: %v\n%s", path, i+1, err, line)
			}
			m := v.(map[string]any)
			typ := m["type"].(string)
			if tr, ok := m["transport"].(string); ok {
				typ += "/" + tr
			}
			types[typ]++
		}
	}
	for _, typ := range []string{"cm", "ddp", "sctp_session", "conn/ib_cm", "conn/sctp", "message"} {
		if types[typ] == 0 {
			t.Errorf("no %s record", typ)
		}
	}
	// The schema is not vacuous for the new types.
	bad := []string{
		`{"v":1,"type":"cm","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"src":"1.2.3.4"}`,
		`{"v":1,"type":"conn","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"transport":"sctp","state":"x"}`,
	}
	for _, b := range bad {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(b))
		if sch.Validate(v) == nil {
			t.Errorf("accepted: %s", b)
		}
	}
}

// proposedFields are the registry names the ext records use that
// dissect/fields.go does not have yet (the list given to the lead).
var proposedFields = map[string]bool{
	"transport": true, "state": true, "initiator": true, "responder": true, "messages": true, "octets": true,
	"first_frame": true, "last_frame": true, "ddp_version": true,
	"msg": true, "transaction_id": true, "local_comm_id": true, "remote_comm_id": true, "service_id": true,
	"port_space": true, "port": true, "service": true, "qpn": true, "start_psn": true, "responder_resources": true,
	"initiator_depth": true, "transport_service_type": true, "path_mtu": true, "pkey": true, "ca_guid": true,
	"reason": true, "reason_name": true, "message_rejected": true, "message_mraed": true, "service_timeout": true,
	"remote_qpn": true, "sidr_status": true, "sidr_status_name": true, "ip_cm": true, "ip_cm.majv": true,
	"ip_cm.minv": true, "ip_cm.ipv": true, "ip_cm.port": true, "ip_cm.src": true, "ip_cm.dst": true, "hello": true,
	"hello.majv": true, "hello.minv": true, "hello.ipv": true, "hello.invalidate": true, "hello.zbva": true,
	"hello.src": true, "hello.dst": true, "hello_ack": true, "hello_ack.majv": true, "hello_ack.minv": true,
	"hello_ack.invalidate": true, "hello_ack.zbva": true, "psn": true, "icrc": true, "icrc_status": true,
	"sidr": true, "pd_format": true, "qpn_i": true, "qpn_r": true, "start_psn_i": true, "start_psn_r": true,
	"rejected": true, "data_packets": true, "data_octets": true,
	"sctp": true, "sctp.stream": true, "sctp.ssn": true, "sctp.tsn": true, "sctp.ppid": true, "sctp.u": true,
	"function": true, "name": true, "ird": true, "ord": true, "a": true, "b": true, "c": true, "d": true, "rtr": true,
	"enhanced": true, "segments": true, "checksum_errors": true,
}

// TestExtKeys: every key the ext records write is in the field registry or
// in the list of names proposed for it.
func TestExtKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, path := range extCaptures(t) {
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			if r.Type < flows.RecCM {
				continue
			}
			collectKeys(format.Fields(r), "", seen)
		}
	}
	for k := range seen {
		if _, ok := dissect.Lookup(k); !ok && !proposedFields[k] {
			t.Errorf("key %q is neither registered nor proposed", k)
		}
	}
}

func collectKeys(kvs []format.KV, prefix string, seen map[string]bool) {
	for _, e := range kvs {
		k := e.Key
		if prefix != "" {
			k = prefix + "." + k
		}
		if prefix == "findings" {
			continue
		}
		seen[k] = true
		if e.Val.Kind == format.KObject && k != "rdmap.read" && k != "rdmap.term" {
			collectKeys(e.Val.Obj, k, seen)
		}
	}
}

// TestExtText checks the one-line text of the real rxe captures.
func TestExtText(t *testing.T) {
	want := map[string][]string{
		"../testdata/rxe/rxe_v4_rping.pcap": {
			"conn 0: CM REQ 198.51.100.2 > 198.51.100.1 comm 0x5d491b2d service rping (tcp port 7174) QPN 0x11 PSN 0xbc9b26 RR 1 ID 1 IP CM 0.0 198.51.100.2 port 39835 > 198.51.100.1",
			"conn 0: CM REP 198.51.100.1 > 198.51.100.2 comm 0x5e491b2d remote 0x5d491b2d QPN 0x11 PSN 0x33d3a2 RR 1 ID 1",
			"conn 0: CM RTU 198.51.100.2 > 198.51.100.1 comm 0x5d491b2d remote 0x5e491b2d",
			"conn 0: CM DREQ 198.51.100.2 > 198.51.100.1 comm 0x5d491b2d remote 0x5e491b2d remote QPN 0x11",
			"conn 0: CM DREP 198.51.100.1 > 198.51.100.2 comm 0x5e491b2d remote 0x5d491b2d",
			"conn 0: ib_cm 198.51.100.2 > 198.51.100.1 closed, service rping (tcp port 7174), QPN 0x11/0x11, 5 CM messages, 36 data packets, 0 findings",
		},
		"../testdata/rxe/rxe_v6_rej_app.pcap": {
			"conn 0: CM REQ 2001:db8:1::2 > 2001:db8:1::1 comm 0x6c491b2d service tcp port 7471 QPN 0x22 PSN 0xc84c9c RR 4 ID 4 IP CM 0.0 2001:db8:1::2 port 60037 > 2001:db8:1::1 pd 21",
			"conn 0: CM REJ 2001:db8:1::1 > 2001:db8:1::2 comm 0x6d491b2d remote 0x6c491b2d reason 28 (consumer_defined) pd 20",
			"conn 0: ib_cm 2001:db8:1::2 > 2001:db8:1::1 rejected (consumer_defined), service tcp port 7471, QPN 0x22/0x0, 2 CM messages, 0 data packets, 1 findings",
		},
	}
	for path, lines := range want {
		var got []string
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			l := string(format.AppendText(nil, r, format.TextOptions{}))
			l = strings.SplitN(l, "\n", 2)[0]
			got = append(got, l[strings.Index(l, "conn "):])
		}
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", path, strings.Join(got, "\n"), strings.Join(lines, "\n"))
		}
	}
	// Every ext record has a line and its findings are reachable.
	for _, path := range extCaptures(t) {
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			if r.Type == flows.RecMessage {
				continue // one-segment messages repeat their segment's line and print nothing
			}
			l := string(format.AppendText(nil, r, format.TextOptions{Verbose: true}))
			if strings.Contains(l, ": unknown") || len(l) < 20 {
				t.Errorf("%s frame %d: %q", path, r.Frame, l)
			}
			_ = format.ExtFindings(r)
		}
	}
}

// TestExtNativeIB checks how CM over native InfiniBand (the generated
// ib-cm-native sample: LIDs 3 and 1, GIDs fe80::/64 + the CA GUIDs
// 0x00005efffe000102 and ...101 on the exchange with GRHs) is written: the
// ends named by LID, or by GID and LID, in the text; src/dst null without
// a GRH and slid/dlid in JSON; and that the schema wants the LIDs when
// src is null.
func TestExtNativeIB(t *testing.T) {
	recs := testutil.Decode(t, "../testdata/synthext/ib-cm-native.pcap", flows.Options{})
	var lines []string
	for _, r := range recs {
		l := string(format.AppendText(nil, r, format.TextOptions{}))
		lines = append(lines, strings.SplitN(l, "\n", 2)[0])
		if strings.Contains(l, "invalid") {
			t.Errorf("frame %d: %q", r.Frame, l)
		}
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"conn 0: CM REQ LID 3 > LID 1 comm 0x",
		"conn 0: CM MRA LID 1 > LID 3 comm 0x",
		"conn 1: CM REQ fe80::5eff:fe00:102 (LID 3) > fe80::5eff:fe00:101 (LID 1) comm 0x",
		"conn 1: CM REJ fe80::5eff:fe00:101 (LID 1) > fe80::5eff:fe00:102 (LID 3) comm 0x",
		"conn 0: ib_cm LID 3 > LID 1 closed, service nfsrdma (tcp port 20049), QPN 0x11/0x12, 6 CM messages, 4 data packets, 0 findings",
		"conn 1: ib_cm fe80::5eff:fe00:102 (LID 3) > fe80::5eff:fe00:101 (LID 1) rejected (consumer_defined), service nvme (tcp port 4420)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no line with %q in\n%s", want, text)
		}
	}
	for _, r := range recs {
		kvs := format.Fields(r)
		switch {
		case r.Type == flows.RecCM && !r.CM.HasGRH:
			if v, _ := format.Get(kvs, "src"); v.Kind != format.KNull {
				t.Errorf("frame %d: src %v without a GRH", r.Frame, v)
			}
			if v, ok := format.Get(kvs, "slid"); !ok || v.Kind != format.KUint {
				t.Errorf("frame %d: slid %v", r.Frame, v)
			}
		case r.Type == flows.RecCM:
			if v, _ := format.Get(kvs, "src"); v.Kind != format.KString || !strings.HasPrefix(v.S, "fe80::") {
				t.Errorf("frame %d: src %v with a GRH", r.Frame, v)
			}
		}
	}
	sch := extSchema(t)
	for _, c := range []struct {
		rec string
		ok  bool
	}{
		{`{"v":1,"type":"cm","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"src":null,"dst":null,"slid":3,"dlid":1,"dir":"i2r","msg":"rtu","transaction_id":1,"local_comm_id":1,"remote_comm_id":2,"pd_len":224,"pd":"","psn":0,"icrc":0,"icrc_status":"unchecked"}`, true},
		{`{"v":1,"type":"cm","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"src":null,"dst":null,"dir":"i2r","msg":"rtu","transaction_id":1,"local_comm_id":1,"remote_comm_id":2,"pd_len":224,"pd":"","psn":0,"icrc":0,"icrc_status":"unchecked"}`, false},
		{`{"v":1,"type":"cm","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"src":null,"dst":null,"slid":3,"dlid":65536,"dir":"i2r","msg":"rtu","transaction_id":1,"local_comm_id":1,"remote_comm_id":2,"pd_len":224,"pd":"","psn":0,"icrc":0,"icrc_status":"unchecked"}`, false},
		{`{"v":1,"type":"conn","frame":1,"ts":"2026-01-01T00:00:00.000000000Z","conn":0,"transport":"ib_cm","initiator":null,"responder":null,"initiator_lid":3,"state":"closed","sidr":false,"local_comm_id":1,"remote_comm_id":2,"pd_format":"raw","rejected":false,"messages":2,"data_packets":0,"data_octets":0,"findings":0,"first_frame":1,"last_frame":2}`, false},
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.rec))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != c.ok {
			t.Errorf("valid %v (%v), want %v: %s", err == nil, err, c.ok, c.rec)
		}
	}
}
