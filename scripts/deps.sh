# shellcheck shell=sh
# deps.sh -- install what gpuorch needs on Debian/Ubuntu, only what is missing.
# Sourced by scripts/demo.sh and scripts/test.sh:  deps_install [--tests]

deps_have_pkg() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

deps_find_nvcc() {
	for _n in "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" \
		/usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc /usr/bin/nvcc; do
		[ -n "$_n" ] && [ -x "$_n" ] && { echo "$_n"; return 0; }
	done
	return 1
}

deps_install() {
	_pkgs="gcc make pkg-config git libssh2-1-dev libcjson-dev libyajl-dev libxml2-dev libarchive-dev libssl-dev libcurl4-openssl-dev libcmark-gfm-dev libcmark-gfm-extensions-dev
		openssh-server openssh-client openssh-sftp-server procps util-linux"
	# the tests run a real single-node Slurm (tests/lib/slurm.sh): Debian's
	# daemons, munge, and the auth/jwt plugin slurmrestd's tokens need;
	# cmake for the CMake builds of t2060 and gpuorch init's file API (t2070)
	# and Debian's chromium with its chromedriver for the site's browser test (t3070)
	[ "${1:-}" = "--tests" ] && _pkgs="$_pkgs valgrind curl slurmctld slurmd slurmrestd slurm-client
		munge slurm-wlm-jwt-plugin python3-jsonschema cmark pmccabe shellcheck cmake groff-base zsh
		chromium chromium-driver"
	_missing=
	for _p in $_pkgs; do
		deps_have_pkg "$_p" || _missing="$_missing $_p"
	done
	if ! deps_find_nvcc >/dev/null; then
		# Debian's CUDA toolkit (contrib/non-free) when NVIDIA's is not installed
		_missing="$_missing nvidia-cuda-toolkit"
	fi
	[ -z "$_missing" ] && return 0
	echo "installing:$_missing" >&2
	_sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || {
			echo "error: missing packages:$_missing; run as root or install sudo" >&2
			return 1
		}
		_sudo=sudo
	fi
	$_sudo apt-get update -q >/dev/null || echo "warning: apt-get update failed" >&2
	# shellcheck disable=SC2086
	if ! DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -q --no-install-recommends $_missing >&2; then
		case "$_missing" in
		*nvidia-cuda-toolkit*)
			echo "warning: no CUDA toolkit could be installed (nvidia-cuda-toolkit needs" \
			     "Debian's contrib/non-free); installing the rest" >&2
			_rest=$(echo "$_missing" | sed 's/nvidia-cuda-toolkit//')
			# shellcheck disable=SC2086
			[ -z "${_rest# }" ] || DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -q \
				--no-install-recommends $_rest >&2 || return 1 ;;
		*) return 1 ;;
		esac
	fi
}
