# bash completion for torch2pprof. Installed as
# share/bash-completion/completions/torch2pprof; tests/e2e/docs_e2e.py checks that it
# offers every option each command's --help lists.

_torch2pprof() {
  local cur prev cmd i
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      convert | analyze | compare | summarize | help) cmd="${COMP_WORDS[i]}"; break ;;
    esac
  done

  local common="--threads --strict --allow-truncated --progress --quiet --help"
  local opts=""
  case "$cmd" in
    convert)
      opts="$common --output --format --sample-type --folded-root --thread-stacks --step-labels --max-depth --stats
        --force --all-frames --critical --max-snapshot-items" ;;
    analyze)
      opts="$common --format --top --table --group-by --stats --straggler-threshold --max-snapshot-items --timeline --force" ;;
    compare)
      opts="$common --format --fail-on --noise-aware --output --top --group-by --force --max-snapshot-items" ;;
    summarize)
      opts="$common --output --stats --force" ;;
    help)
      COMPREPLY=($(compgen -W "convert analyze compare summarize" -- "$cur"))
      return ;;
    "")
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "convert analyze compare summarize help" -- "$cur"))
        [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return ;;
  esac

  # Values of options that take one.
  case "$prev" in
    --format | -format)
      case "$cmd" in
        convert) COMPREPLY=($(compgen -W "pprof folded pstats" -- "$cur")) ;;
        analyze) COMPREPLY=($(compgen -W "text json csv html" -- "$cur")) ;;
        compare) COMPREPLY=($(compgen -W "text json markdown html" -- "$cur")) ;;
      esac
      return ;;
    --table | -table)
      # The report's lists (analyze --help); tests/e2e/lists_e2e.py keeps them equal.
      COMPREPLY=($(compgen -W "categories steps critical_path critical_top operators kernels gpu idle_time kernel_launches
        queue_length copies kernel_types temporal_breakdown tensor_cores kernels_by_operator synchronizations annotations collective_sizes memory modules
        module_classes python_functions
        ranks spreads stragglers slow_ranks collectives step_alignment
        devices peak_sites ooms oom_sites timeline site_series" -- "$cur"))
      return ;;
    --group-by | -group-by)
      COMPREPLY=($(compgen -W "name shape" -- "$cur")); return ;;
    --step-labels)
      COMPREPLY=($(compgen -W "auto on off" -- "$cur")); return ;;
    --folded-root)
      COMPREPLY=($(compgen -W "auto thread device rank none" -- "$cur")); return ;;
    --sample-type)
      COMPREPLY=($(compgen -W "calls wall work gpu critical alloc_objects alloc_space inuse_objects inuse_space dump_space dump_objects" -- "$cur"))
      return ;;
    --fail-on)
      COMPREPLY=($(compgen -W "step_time> kernel_time> comm_time> memory_peak> gpu_util< op: kernel:" -- "$cur"))
      return ;;
    --threads | -threads | --top | -top | --max-depth | --straggler-threshold)
      return ;;
    -o | --output | -output | --timeline)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac

  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))  # traces and output files
  fi
}

complete -o filenames -o bashdefault -F _torch2pprof torch2pprof
