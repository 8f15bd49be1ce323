/* tokenizer.h - Hugging Face byte-level BPE tokenizers (tokenizer.json as
 * GPT-2, Llama 3, Qwen2 and Qwen3 ship it), internal; src/io/tokenizer.c.
 *
 * Supported: model BPE (vocab, merges as "a b" strings or ["a", "b"] pairs,
 * ignore_merges, unk_token), added_tokens, normalizer null / NFC / Sequence
 * of NFC, pre_tokenizer ByteLevel or Sequence of Split (Regex or String,
 * behavior Isolated, invert false) ending in ByteLevel, ByteLevel decoding.
 * Anything else is refused at load with a message naming the key.
 * post_processor, truncation and padding are ignored: encode adds no
 * BOS / EOS of its own (Llama 3's template would add <|begin_of_text|>).
 *
 * Differences from the `tokenizers` library, on purpose:
 *   - added tokens are matched in the raw text (leftmost, longest first)
 *     whatever their "normalized" flag; lstrip, rstrip and single_word must
 *     be false;
 *   - a byte without a vocab entry is an error (naming the piece) when the
 *     model has no unk_token; `tokenizers` drops it silently;
 *   - text must be valid UTF-8 (Rust's &str always is) and at most 1 GiB: an
 *     error otherwise.
 */
#ifndef WGNN_IO_TOKENIZER_H
#define WGNN_IO_TOKENIZER_H

#include "wgnn.h"

#include <stddef.h>
#include <stdint.h>

/* The public wgnn_tokenizer (include/wgnn.h) is this struct; the public
 * functions are these under their wgnn_ names. */
typedef struct wgnn_tokenizer wgnn__tokenizer;

/* path: a tokenizer.json or a folder holding one (at most 256 MiB). */
wgnn_status wgnn__tokenizer_load(const char *path, wgnn__tokenizer **out, char *err, size_t err_len);
/* The same from memory; label names the text in messages. */
wgnn_status wgnn__tokenizer_parse(const char *json, size_t len, const char *label, wgnn__tokenizer **out, char *err,
                                  size_t err_len);
void wgnn__tokenizer_free(wgnn__tokenizer *t); /* NULL: no-op */

/* *ids is malloc'd (NULL when *n == 0); the caller frees it. Added and
 * special tokens in the text are matched first, longest first. */
wgnn_status wgnn__tokenizer_encode(const wgnn__tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                   char *err, size_t err_len);

/* Incremental decoding: the bytes of each pushed id join a stream; complete
 * UTF-8 characters come out, an incomplete tail (at most 3 bytes) is held
 * back. Bytes that can never form a character come out as U+FFFD, one per
 * maximal invalid subpart, as Rust's String::from_utf8_lossy does. */
typedef wgnn_detok wgnn__detok;

void wgnn__detok_init(wgnn__detok *d);
/* Writes the newly completed text to out (at most cap bytes), its length to
 * *n_out. WGNN_ERR_INVALID_ARGUMENT for an id out of range, WGNN_ERR_LIMIT
 * when the text would not fit in cap; d is unchanged on failure. A cap of
 * wgnn__detok_max_out(t) always suffices. */
wgnn_status wgnn__detok_push(const wgnn__tokenizer *t, wgnn__detok *d, int32_t id, char *out, size_t cap,
                             size_t *n_out);
/* End of stream: a held-back tail comes out as U+FFFD (cap >= 3). */
wgnn_status wgnn__detok_flush(wgnn__detok *d, char *out, size_t cap, size_t *n_out);
size_t wgnn__detok_max_out(const wgnn__tokenizer *t);

/* The id of a token (vocab entry or added token), -1 if none. */
int32_t wgnn__tokenizer_token_id(const wgnn__tokenizer *t, const char *token);
/* Largest id + 1, added tokens included. */
int wgnn__tokenizer_vocab_size(const wgnn__tokenizer *t);

#endif /* WGNN_IO_TOKENIZER_H */
