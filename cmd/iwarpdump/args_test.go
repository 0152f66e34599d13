package main

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// TestGetoptArgs: command lines as tcpdump's getopt reads them become the
// ones package flag reads the same way.
func TestGetoptArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Bool("n", false, "")
	fs.Bool("v", false, "")
	fs.Bool("tt", false, "")
	fs.Bool("ttt", false, "")
	fs.String("t", "", "")
	fs.Bool("mmap", false, "")
	fs.String("c", "", "")
	fs.String("i", "", "")
	fs.String("r", "", "")
	fs.String("decode-as", "", "")
	for _, c := range []struct{ in, want string }{
		{"-i eth0 tcp port 80 -c 10", "-i eth0 -c 10 tcp port 80"},
		{"-nn -vv -c1 -ilo", "-n -n -v -v -c 1 -i lo"},
		{"-nv -c 10", "-n -v -c 10"},
		{"-nc 5 tcp", "-n -c 5 tcp"},
		{"-rcap.pcap", "-r cap.pcap"},
		{"-r - -tt", "-r - -tt"},
		{"-mmap -r x", "-mmap -r x"},
		{"--decode-as tcp.port==1 host a -n", "--decode-as tcp.port==1 -n host a"},
		{"-decode-as=tcp.port==1 port 1", "-decode-as=tcp.port==1 port 1"},
		{"-r x -- tcp -n", "-r x tcp -n"},
		{"-nntt -r x", "-n -n -tt -r x"}, // tcpdump's -tt in a cluster
		{"-nnttr x", "-n -n -tt -r x"},
		{"-tttn -r x", "-ttt -n -r x"},
		{"-nta", "-n -t a"},                  // one t: -t FORMAT
		{"-nk -r x", "-nk -r x"},             // k is no option: left for flag to refuse
		{"-r x port 1 -q", "-r x -q port 1"}, // unknown: moved, refused by flag
		{"", ""},
	} {
		got := strings.Join(getoptArgs(fs, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGetoptCommandLines: tcpdump habits give the output of the plain
// command line.
func TestGetoptCommandLines(t *testing.T) {
	f := siw + "crc_v2_rping.pcap"
	for _, c := range [][2][]string{
		{{"-r", f, "tcp", "port", "7174", "-c", "12", "-nn"}, {"-n", "-c", "12", "-r", f, "tcp", "port", "7174"}},
		{{"-vv", "-c12", "-r" + f}, {"-v", "-c", "12", "-r", f}},
		{{"-qnc", "20", "-r", f}, {"-q", "-c", "20", "-r", f}},
		{{"-nnttr", f}, {"-tt", "-r", f}}, // as tcpdump -nnttr
		{{"-ntttt", "-r", f}, {"-tttt", "-r", f}},
	} {
		c1, o1, e1 := runCmd(t, nil, c[0]...)
		c2, o2, e2 := runCmd(t, nil, c[1]...)
		if c1 != 0 || c1 != c2 || o1 != o2 || e1 != e2 || o1 == "" {
			t.Errorf("%v: exit %d, %d octets (%s); %v: exit %d, %d octets", c[0], c1, len(o1), e1, c[1], c2, len(o2))
		}
	}
	if code, _, errs := runCmd(t, nil, "-r", f, "-nk"); code != 2 || !slices.ContainsFunc(strings.Split(errs, "\n"), func(l string) bool { return strings.Contains(l, "-nk") }) {
		t.Errorf("-nk: exit %d: %s", code, errs)
	}
}
