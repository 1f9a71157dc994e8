# Sourced by scripts/with-engines and scripts/deploy-checks: exports TASKGATE_TOOLS, the folder
# the built tools (the Temporal CLI, OpenTofu, the npm packages) are kept in. Unless set, it is the
# one `taskgate dev` uses: taskgate in the user's cache folder (Go's os.UserCacheDir).
case "$(uname)" in
  Darwin) _taskgate_cache=$HOME/Library/Caches ;;
  *) _taskgate_cache=${XDG_CACHE_HOME:-$HOME/.cache} ;;
esac
export TASKGATE_TOOLS=${TASKGATE_TOOLS:-$_taskgate_cache/taskgate}
unset _taskgate_cache
