# Sourced by scripts/with-engines. moto_python prints a Python whose moto's server is the version
# scripts/sfn-local's mends were written for: python3 when it has it, else the virtual environment
# $TASKGATE_TOOLS/moto-$moto_version, which it creates with pip once (and again if its Python went).
# Only moto is pinned: pip resolves its dependencies (boto3, werkzeug, flask, ...) to the newest
# releases moto accepts on the day of the first install.
moto_version=$(sed -n 's/^MOTO_VERSION = "\(.*\)"$/\1/p' scripts/sfn-local)

has_moto() {
  "$1" -c "import sys, moto, moto.moto_server.werkzeug_app; sys.exit(moto.__version__ != '$moto_version')" 2>/dev/null
}

moto_python() {
  local venv=${TASKGATE_TOOLS:?moto_python runs under scripts/with-engines, which sets the tool cache}/moto-$moto_version tmp log
  if has_moto python3; then echo python3; return; fi
  if ! has_moto "$venv/bin/python"; then
    echo "installing moto[server]==$moto_version into $venv (once: python3 lacks it)" >&2
    tmp=$venv.tmp.$$
    log=$(mktemp)
    rm -rf "$tmp"
    if ! { python3 -m venv "$tmp" &&
      "$tmp/bin/python" -m pip install --disable-pip-version-check --no-input "moto[server]==$moto_version"; } >"$log" 2>&1; then
      {
        echo "could not install moto[server]==$moto_version into $venv, which scripts/sfn-local needs; pip said:"
        tail -n 15 "$log"
        echo "Without PyPI, set PIP_INDEX_URL to a mirror of it or PIP_FIND_LINKS to a folder of wheels and run again;"
        echo "or install it into python3 (python3 -m pip install 'moto[server]==$moto_version'), or set SFN_ENDPOINT to a running endpoint."
      } >&2
      rm -rf "$tmp" "$log"
      return 1
    fi
    rm -f "$log"
    # Moved whole: only bin/python is run, which finds its packages from where it is (the
    # scripts pip wrote into bin/ name the old folder).
    rm -rf "$venv" && mv "$tmp" "$venv"
  fi
  echo "$venv/bin/python"
}
