#!/usr/bin/env bash
# session 6 call 5: call 4's script on build 3205db3 (16-wide register tiles
# with the k step and epilogue written out by the prelude, XU), without the
# 16x16x8x8x16 tile
T="16x16x8x8x8 16x8x16x8x8 8x16x8x16x8 16x8x16x8x16 8x16x8x16x16" bash docs/data/session6/dev4_script.sh
