# cairn: build and install the binary, its man pages and shell completions.
#
#   make                 build ./cairn
#   make install         install under PREFIX (default /usr/local)
#   make install DESTDIR=/tmp/pkg PREFIX=/usr    stage for a package
#
# The systemd units of contrib/ are installed into PREFIX/lib/systemd/system
# with the installed binary's path written for @BINDIR@.
#
# The version, commit and commit time are set with -ldflags -X (see
# cmd/cairn/cli/version.go); without them cairn falls back to the build
# information Go records.

PREFIX  ?= /usr/local
DESTDIR ?=
GO      ?= go
BINDIR  := $(DESTDIR)$(PREFIX)/bin
MANDIR  := $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR  := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
UNITDIR := $(DESTDIR)$(PREFIX)/lib/systemd/system
UNITS   := cairn-serve.service cairn-mount@.service

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
CTIME   ?= $(shell git log -1 --format=%cI 2>/dev/null)
DIRTY   ?= $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true || echo false)
CLI     := github.com/cairnfs/cairn/cmd/cairn/cli
LDFLAGS := -X $(CLI).version=$(VERSION) -X $(CLI).commit=$(COMMIT) -X $(CLI).commitTime=$(CTIME) -X $(CLI).dirty=$(DIRTY)

.PHONY: all cairn install uninstall clean

all: cairn

cairn:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o cairn ./cmd/cairn

install: cairn
	install -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR) $(UNITDIR)
	install -m 0755 cairn $(BINDIR)/cairn
	rm -rf .man && ./cairn gen man .man -q
	install -m 0644 .man/*.1 $(MANDIR)/
	rm -rf .man
	./cairn completion bash > $(BASHDIR)/cairn
	./cairn completion zsh > $(ZSHDIR)/_cairn
	./cairn completion fish > $(FISHDIR)/cairn.fish
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(PREFIX)/bin|g' contrib/$$u > $(UNITDIR)/$$u.tmp && \
		chmod 0644 $(UNITDIR)/$$u.tmp && mv $(UNITDIR)/$$u.tmp $(UNITDIR)/$$u || exit 1; \
	done

uninstall:
	rm -f $(BINDIR)/cairn $(MANDIR)/cairn.1 $(MANDIR)/cairn-*.1
	rm -f $(BASHDIR)/cairn $(ZSHDIR)/_cairn $(FISHDIR)/cairn.fish
	for u in $(UNITS); do rm -f $(UNITDIR)/$$u; done

clean:
	rm -rf cairn .man
