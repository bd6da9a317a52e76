// Command cairn is cairn's command line; its code is package cli.
package main

import "github.com/cairnfs/cairn/cmd/cairn/cli"

func main() { cli.Main() }
