// common/data_err.wgsl - errors in the data a kernel reads, found on the GPU
// (`#include "common/data_err"`): the context's four data-error words
// (src/internal.h, WGNN__DATA_ERR_*; wgnn__data_error in src/gpu/encoder.c
// turns them into the message). data_err stores, the first time any
// invocation calls it, a code, the bad value (i32 bits), its position and a
// bound; later calls change nothing (the weak compare-exchange is retried
// while the code word is still 0, as it may fail spuriously). The kernel declares the binding:
//   var<storage, read_write> flag: array<atomic<u32>>;  // 4 words
// The codes must equal src/internal.h's (test_core checks them).

const DATA_ERR_INDEX: u32 = 1u;      // gather: indices[at] = value not in [0, bound)
const DATA_ERR_INDEX_COPY: u32 = 2u; // index_copy: index[at] = value not in [0, bound)
const DATA_ERR_SEQLEN: u32 = 3u;     // attention: cache_seqlens[at] = value not in [0, bound - 1]
const DATA_ERR_SEQLEN_NEW: u32 = 4u; // cache_seqlens[at] = value < bound new rows (or past the cache)
const DATA_ERR_SAMPLE: u32 = 5u;     // sample: row `at` has no token of nonzero mass
const DATA_ERR_CACHE_POS: u32 = 6u;  // qkv_rope_cache: positions[at] = value not in [0, bound)

fn data_err(code: u32, value: u32, at: u32, bound: u32) {
    loop {
        let r = atomicCompareExchangeWeak(&flag[0], 0u, code);
        if (r.exchanged) {
            atomicStore(&flag[1], value);
            atomicStore(&flag[2], at);
            atomicStore(&flag[3], bound);
            return;
        }
        if (r.old_value != 0u) { return; }
    }
}
