//go:build !unix

package main

import "errors"

// dropPrivileges is not available on this platform.
func dropPrivileges(name string) error {
	return errors.New("dropping privileges is not supported on this platform")
}

// chownTo is not available on this platform.
func chownTo(path, name string) error {
	return errors.New("changing a file's owner is not supported on this platform")
}
