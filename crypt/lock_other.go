//go:build !unix

package crypt

func keyMemory(n int) ([]byte, bool) { return make([]byte, n), false }

func freeKeyMemory([]byte) {}
