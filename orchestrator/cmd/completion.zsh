# completion.zsh -- the fixed part of gpuorch's zsh completion (the file
# _gpuorch on $fpath). The lines before it, written by `gpuorch __doc zsh`
# (orchestrator/cmd/cmd-doc.c) from the commands' declared options, set
# _gpuorch_commands (NAME:summary), _gpuorch_verbs_CMD (the words CMD's
# first argument may be) and _gpuorch_opts_CMD (_arguments specs).
# Installed by `make install` as share/zsh/site-functions/_gpuorch.
local cmd var
if (( CURRENT == 2 )); then
	_describe -t commands 'gpuorch command' _gpuorch_commands
	return
fi
cmd=$words[2]
var=_gpuorch_verbs_$cmd
if (( CURRENT == 3 )) && (( ${+parameters[$var]} )); then
	_describe -t verbs "gpuorch $cmd verb" $var
	return
fi
var=_gpuorch_opts_$cmd
(( ${+parameters[$var]} )) || return 1
shift words
(( CURRENT-- ))
_arguments -S "${(@P)var}" '*:argument:_files'
