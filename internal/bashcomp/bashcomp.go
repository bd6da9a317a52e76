package bashcomp

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// bashFallbacks stand in for the two functions of the bash-completion
// package that cobra's bash script calls (_get_comp_words_by_ref and
// _filedir), so that `source <(cairn completion bash)` completes in a
// plain bash too. They are used only while bash-completion's are not
// defined, and are named for cairn: a script that tests for
// bash-completion's functions still finds them missing.
const bashFallbacks = `
# cairn: without the bash-completion package, _get_comp_words_by_ref and
# _filedir are missing; these stand in for them.

# __cairn_comp_words sets cur, prev, words and cword from COMP_WORDS as
# '_get_comp_words_by_ref -n =: cur prev words cword' does: the words bash
# split at = and : (--store=DIR, a snapshot's time) joined again, and the
# word under the cursor cut at the cursor.
__cairn_comp_words()
{
    local line=${COMP_LINE:0:COMP_POINT} rest w i joined=0 prevraw=
    words=() cword=-1
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        rest=${line#"${line%%[![:space:]]*}"}
        if ((i == COMP_CWORD)) && ((${#w} > ${#rest})); then
            w=${rest}
        fi
        if ((cword >= 0)) && [[ ${#rest} -eq ${#line} ]] &&
            [[ $w == [=:]* || $prevraw == *[=:] ]]; then
            words[cword]+=$w
        else
            words+=("$w")
            cword=$((${#words[@]} - 1))
        fi
        prevraw=$w
        line=${rest:${#w}}
    done
    cur=${words[cword]-}
    prev=${words[cword-1]-}
}

__cairn_get_words()
{
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@"
    else
        __cairn_comp_words
    fi
}

# __cairn_filedir completes file names (directories only with -d, else
# those ending in one of the '|'-separated extensions of $1, if given).
__cairn_filedir()
{
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir "$@"
        return
    fi
    local IFS=$'\n' f ext
    if [[ ${1-} == -d ]]; then
        COMPREPLY+=($(compgen -d -- "$cur"))
    else
        for f in $(compgen -f -- "$cur"); do
            if [[ -z ${1-} || -d $f ]]; then
                COMPREPLY+=("$f")
                continue
            fi
            for ext in ${1//|/$'\n'}; do
                [[ $f == *."$ext" ]] && COMPREPLY+=("$f") && break
            done
        done
    fi
    if [[ $(type -t compopt) == builtin ]]; then
        compopt -o filenames 2>/dev/null
    fi
}
`

// The calls of cobra's script that the fallbacks replace.
var (
	bashWordsCall = "_get_comp_words_by_ref \"$@\" cur prev words cword"
	bashFiledir   = regexp.MustCompile(`\b_filedir\b`)
)

// Script is cobra's bash completion script of root with the fallbacks
// (descriptions: of the completions too).
func Script(root *cobra.Command, descriptions bool) (string, error) {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, descriptions); err != nil {
		return "", fmt.Errorf("completion bash: %w", err)
	}
	script := b.String()
	if strings.Count(script, bashWordsCall) != 1 || !bashFiledir.MatchString(script) {
		return "", fmt.Errorf("completion bash: cobra's script no longer calls %q and _filedir as cairn expects", bashWordsCall)
	}
	script = strings.Replace(script, bashWordsCall, "__cairn_get_words \"$@\" cur prev words cword", 1)
	script = bashFiledir.ReplaceAllString(script, "__cairn_filedir")
	return script + bashFallbacks, nil
}
