package tui

import (
	"encoding/xml"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// tsharkFrames returns the frame numbers tshark selects with a display
// filter (skips without tshark, see testutil.RequireTshark).
func tsharkFrames(t *testing.T, path, filter string) []uint64 {
	t.Helper()
	ts := testutil.RequireTshark(t)
	out, err := exec.Command(ts, "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var fs []uint64
	for _, l := range strings.Fields(string(out)) {
		n, err := strconv.ParseUint(l, 10, 64)
		if err != nil {
			t.Fatalf("tshark output %q", l)
		}
		fs = append(fs, n)
	}
	return fs
}

// pdmlField is where tshark puts a field in a frame: its offset in the
// frame, its size and its octets in hex.
type pdmlField struct {
	Pos, Size int
	Value     string
}

// tsharkField returns the first occurrence of field name in frame
// (tshark -T pdml: pos and size count octets of the frame).
func tsharkField(t *testing.T, path string, frame int, name string) pdmlField {
	t.Helper()
	ts := testutil.RequireTshark(t)
	cmd := exec.Command(ts, "-r", path, "-Y", "frame.number=="+strconv.Itoa(frame), "-T", "pdml")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	d := xml.NewDecoder(out)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("pdml: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "field" {
			continue
		}
		var f pdmlField
		match := false
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "name":
				match = a.Value == name
			case "pos":
				f.Pos, _ = strconv.Atoi(a.Value)
			case "size":
				f.Size, _ = strconv.Atoi(a.Value)
			case "value":
				f.Value = a.Value
			}
		}
		if match {
			_, _ = io.Copy(io.Discard, out)
			return f
		}
	}
	t.Fatalf("tshark shows no %s in frame %d", name, frame)
	return pdmlField{}
}

// tsharkFrameLen returns the length of frame in octets (frame.len).
func tsharkFrameLen(t *testing.T, path string, frame uint64) int {
	t.Helper()
	ts := testutil.RequireTshark(t)
	out, err := exec.Command(ts, "-r", path, "-Y", "frame.number=="+strconv.FormatUint(frame, 10), "-T", "fields", "-e", "frame.len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("tshark frame.len %q", out)
	}
	return n
}
