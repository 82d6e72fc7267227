#!/bin/bash
# The bash completion of the --ddp-* options (configs/completion/slurm-ddp.bash.in): it offers
# exactly the plugin's options (plugin/core/options/options.hpp), their values and the site's
# profile names, and leaves every other word to Slurm's own completion.
#   completion_test.sh SOURCE_DIR
set -euo pipefail
SRC=$1
T=$(mktemp -d /tmp/ddp-completion.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$T/profiles"
touch "$T/profiles/vega.yaml" "$T/profiles/olivia.yaml"
echo "required /usr/lib/slurm/spank_ddp.so port_range=20000-29999 profile_dir=$T/profiles" >"$T/ddp.conf"
sed "s|@DDP_FULL_PLUGSTACK_SNIPPET@|$T/ddp.conf|" "$SRC/configs/completion/slurm-ddp.bash.in" >"$T/slurm-ddp"

# Slurm's completion, as its stand-in: it answers every word it is asked for.
_srun() { COMPREPLY=(slurm-completed); }
. "$T/slurm-ddp"
complete -p srun sbatch salloc | grep -c _ddp_slurm_complete | grep -qx 3 || fail "not registered for srun, sbatch, salloc"

complete_words() {  # WORD...: COMPREPLY for the last word of `srun WORD...`, as one line
  local line="srun $*" w
  # Split as bash does: at spaces, and at '=' when COMP_WORDBREAKS has it.
  [[ $COMP_WORDBREAKS == *=* ]] && line=${line//=/ = }
  read -ra w <<<"$line"
  [[ $* == *= && $COMP_WORDBREAKS == *=* ]] && w+=("")
  COMP_WORDS=("${w[@]}")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _ddp_slurm_complete srun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  echo "${COMPREPLY[*]}"
}
COMP_WORDBREAKS=$' \t\n"\'><;|&('  # '=' does not break words here: replies carry the option

# Every option of the plugin, and no other.
plugin=$(sed -n 's/^inline constexpr const char\* kOpt[A-Za-z]* = "\(ddp[a-z-]*\)";$/--\1/p' \
  "$SRC/plugin/core/options/options.hpp" | sort)
offered=$(complete_words --ddp | tr ' ' '\n' | tr -d '=' | sort)
[ -n "$plugin" ] && [ "$plugin" = "$offered" ] || fail "offered: $offered; the plugin has: $plugin"
[ "$(complete_words -N2 --ddp-ba)" = "--ddp-backend=" ] || fail "--ddp-ba: $(complete_words --ddp-ba)"
[ "$(complete_words --ddp-backend=g)" = "--ddp-backend=gloo" ] || fail "--ddp-backend=g"
[ "$(complete_words --ddp-profile=)" = "--ddp-profile=olivia --ddp-profile=vega" ] ||
  fail "profiles: $(complete_words --ddp-profile=)"
[ "$(complete_words --ddp=o)" = "--ddp=olivia --ddp=off" ] || fail "--ddp=o: $(complete_words --ddp=o)"
[ "$(complete_words --ddp-preflight=)" = "--ddp-preflight=yes --ddp-preflight=no" ] || fail "--ddp-preflight="
[ "$(complete_words --ddp-watch=o)" = "--ddp-watch=off" ] || fail "--ddp-watch=o: $(complete_words --ddp-watch=o)"
# Where '=' breaks words (bash's default), only the value replaces the word after it.
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
[ "$(complete_words --ddp-bind=c)" = "closest" ] || fail "with '=' breaking words: $(complete_words --ddp-bind=c)"
[ "$(complete_words -N1 --ddp-backend=)" = "nccl gloo" ] || fail "with '=' breaking words: $(complete_words --ddp-backend=)"
# Everything else is Slurm's.
[ "$(complete_words --nod)" = "slurm-completed" ] || fail "a Slurm option was not left to Slurm"
echo "PASS: --ddp-* options, values and profile names completed; the rest left to Slurm's completion"
