# shellcheck shell=bash
# completion-bash.sh -- the fixed part of gpuorch's bash completion. The
# lines before it, written by `gpuorch __doc bash` (orchestrator/cmd/cmd-doc.c)
# from the commands' declared options, set _gpuorch_commands (the commands),
# _gpuorch_verbs_CMD (the words CMD's first argument may be) and
# _gpuorch_opts_CMD (its options: "--name" for a flag, "--name=KIND" for
# one with a value, KIND @file, @dir, its choices between commas, or empty).
# Installed by `make install` as share/bash-completion/completions/gpuorch.

# _gpuorch_value KIND CUR: COMPREPLY for an option's value
_gpuorch_value() {
	case $1 in
	@file) mapfile -t COMPREPLY < <(compgen -f -- "$2") ;;
	@dir) mapfile -t COMPREPLY < <(compgen -d -- "$2") ;;
	'') COMPREPLY=() ;;
	*) mapfile -t COMPREPLY < <(compgen -W "${1//,/ }" -- "$2") ;;
	esac
}

# _gpuorch_commands is set by the generated lines above this file's text
# shellcheck disable=SC2154
_gpuorch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd=${COMP_WORDS[1]-} opts verbs o names=
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ] || { [ "$cmd" = help ] && [ "$COMP_CWORD" -eq 2 ]; }; then
		mapfile -t COMPREPLY < <(compgen -W "$_gpuorch_commands help --help --version" -- "$cur")
		return 0
	fi
	case " $_gpuorch_commands " in
	*" $cmd "*) ;;
	*) return 0 ;;
	esac
	opts=_gpuorch_opts_$cmd
	opts=${!opts-}
	verbs=_gpuorch_verbs_$cmd
	verbs=${!verbs-}
	# the value of the option before the cursor
	for o in $opts; do
		case $o in
		"$prev"=*)
			_gpuorch_value "${o#*=}" "$cur"
			return 0
			;;
		esac
		names="$names ${o%%=*}"
	done
	if [ "$COMP_CWORD" -eq 2 ] && [ -n "$verbs" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$verbs" -- "$cur")
		return 0
	fi
	case $cur in
	-*) mapfile -t COMPREPLY < <(compgen -W "$names --help" -- "$cur") ;;
	*) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
	return 0
}
complete -F _gpuorch gpuorch
