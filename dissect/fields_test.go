package dissect

import "testing"

// lookupScan is Lookup as a search: the names first, then the aliases, in
// registry order.
func lookupScan(name string) (Field, bool) {
	for i := range fields {
		if fields[i].Name == name {
			return fields[i], true
		}
	}
	for i := range fields {
		for _, a := range fields[i].Aliases {
			if a == name {
				return fields[i], true
			}
		}
	}
	return Field{}, false
}

// TestLookup: the index finds what a search of the registry finds, for
// every name and alias and for names that are not there.
func TestLookup(t *testing.T) {
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
		names = append(names, f.Aliases...)
	}
	if len(names) < 50 {
		t.Fatalf("only %d names and aliases", len(names))
	}
	names = append(names, "", "x", "ddp.", "rdmap.opcode ", "RDMAP.OPCODE", "iwarp_rdma")
	for _, n := range names {
		got, ok := Lookup(n)
		want, wok := lookupScan(n)
		if ok != wok || got.Name != want.Name || got.Type != want.Type {
			t.Errorf("Lookup(%q) = %q %v, want %q %v", n, got.Name, ok, want.Name, wok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Lookup("ddp.stag") }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// TestLookupPath: keys nested in a record's tree find the registry entry
// that describes them.
func TestLookupPath(t *testing.T) {
	for path, want := range map[string]string{
		"ddp.stag":                        "ddp.stag",
		"iwarp_ddp.stag":                  "ddp.stag",
		"rdmap.term.ddp.stag":             "ddp.stag",
		"rdmap.term.rdmap.read.sink_stag": "rdmap.read.sink_stag",
		"mpa.markers[2].fpduptr":          "mpa.marker.fpduptr",
		"findings[0].code":                "code",
		"enhanced.ird":                    "enhanced.ird",
		"a[1][2].b[3].ddp.to":             "ddp.to",
	} {
		f, ok := LookupPath(path)
		if !ok || f.Name != want {
			t.Errorf("LookupPath(%q) = %q %v, want %q", path, f.Name, ok, want)
		}
	}
	for _, path := range []string{"", "nosuch", "x.nosuch", "[", "]]", "x[.y"} {
		if f, ok := LookupPath(path); ok {
			t.Errorf("LookupPath(%q) = %q, want none", path, f.Name)
		}
	}
}
