// What leaves the node when the model is asked: the log tail with secrets and personal names
// taken out. Line for line (a line stays a line, so the evidence line the model quotes maps
// back to its line number in the job's own log), each secret replaced by a marker naming what
// was there ("[REDACTED:password]"), never by something that could be mistaken for the value.
//
// Removed: PEM private-key blocks (also one cut off by the tail's end), Authorization /
// Proxy-Authorization / Cookie headers, "Bearer ..." and "Basic ..." credentials,
// key=value and "key": "value" pairs whose key names a secret (password, passwd, pwd,
// secret, token, api key, access key, private key, credential, auth, session, cookie),
// command-line flags of the same names (--password X, --token=X), AWS access key ids,
// well-known token shapes (GitHub, OpenAI, Hugging Face, Slack, Google API keys, JWTs,
// Weights & Biases 40-hex keys after a key name), user:password@ in URLs, e-mail addresses,
// home directories (/home/NAME, /Users/NAME, and the job user's own name anywhere).
//
// A secret printed bare with nothing naming it is caught only by its shape: 32+ characters of
// base64's alphabet mixing upper case, lower case and digits, with near-random spread
// ("[REDACTED:random string]"). Hex (hashes, addresses, ids), paths and words stay. A short or
// hex-only bare secret still passes; the admin who points llm_endpoint= at a server decides
// that the server may see job logs (see faultguard(8)).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acme::diagnose {

struct RedactOptions {
    // Words replaced wherever they occur as a whole word: the job's user name, say. Shorter
    // than 3 characters they are ignored (they would eat ordinary words).
    std::vector<std::string> words;
};

std::string redact(std::string_view text, const RedactOptions& options = {});

}  // namespace acme::diagnose
