#!/usr/bin/env bash
# Session 19 call 1 (session 18 had no device): session 18's pending script,
# unchanged; its header says how to build build/q8xs/wgnn before the call.
# Device tool: carry [".gl", "deps/dawn/lib", "build"]; about 6 minutes.
exec bash "$(dirname "$0")/../session18/pending_script.sh"
