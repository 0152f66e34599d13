//go:build !libpcap

package main

// buildTags are the tags the end-to-end tests build iwarpdump with: the
// same backend as the test binary.
const buildTags = ""
