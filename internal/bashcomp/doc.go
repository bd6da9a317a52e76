// Package bashcomp owns cairn's bash completion script: cobra's script
// with stand-ins for the two functions of the bash-completion package it
// calls, so that it completes in a plain bash too (Script).
package bashcomp
