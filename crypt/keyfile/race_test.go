//go:build race

package keyfile

func init() { raceEnabled = true }
