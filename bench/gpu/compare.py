"""Parity and speed of sentence-transformers beside papers (run.sh calls it).

    compare.py MODEL_DIR DEVICE PARITY_TEXTS FIXTURES TEXTS PRECISION=JSONL...

Prints one JSON object: for each precision papers ran in, the least cosine,
per text, between papers' vector (JSONL, `papers embed` output) and
sentence-transformers' fp32 vector of the same text on the same device and
weights; and sentence-transformers' encode rate in fp32 and fp16 (batch
256) over TEXTS. Without sentence-transformers (a CPU dry run on a bare machine), the
parity is against FIXTURES, vectors sentence-transformers made elsewhere of
the same seed abstracts (by SHA-256 of the text), and the rates are absent.
"""

import hashlib
import json
import sys
import time


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb)


def main():
    model_dir, device, parity_path, fixtures_path, texts_path = sys.argv[1:6]
    parity = [line.rstrip("\n") for line in open(parity_path, encoding="utf-8")]
    ours = {}
    for pair in sys.argv[6:]:
        precision, path = pair.split("=", 1)
        ours[precision] = [json.loads(line)["embedding"] for line in open(path, encoding="utf-8")]
    out = {"parity_texts": len(parity), "min_cosine": {}}
    try:
        import sentence_transformers
        import torch
    except ImportError:
        fixtures = {}
        for line in open(fixtures_path, encoding="utf-8"):
            record = json.loads(line)
            fixtures[record["sha256"]] = record["embedding"]
        for precision, vectors in ours.items():
            pairs = [
                (fixtures[hashlib.sha256(t.encode()).hexdigest()], v)
                for t, v in zip(parity, vectors)
                if hashlib.sha256(t.encode()).hexdigest() in fixtures
            ]
            out["min_cosine"][precision] = min(cosine(a, b) for a, b in pairs)
            out["parity_texts"] = len(pairs)
        out["against"] = f"sentence-transformers' stored fp32 vectors of {out['parity_texts']} of them"
        print(json.dumps(out))
        return
    out["version"] = sentence_transformers.__version__
    model = sentence_transformers.SentenceTransformer(model_dir, device=device)
    theirs = model.encode(parity, batch_size=64, convert_to_numpy=True)
    for precision, vectors in ours.items():
        out["min_cosine"][precision] = min(cosine(a, b.tolist()) for a, b in zip(vectors, theirs))
    out["against"] = f"sentence-transformers fp32 on {device}"
    texts = [line.rstrip("\n") for line in open(texts_path, encoding="utf-8")]
    for name, half in (("fp32", False), ("fp16", True)):
        if half and device == "cpu":
            continue
        m = sentence_transformers.SentenceTransformer(model_dir, device=device)
        if half:
            m = m.half()
        m.encode(texts[:512], batch_size=256)  # warm-up
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.time()
        m.encode(texts, batch_size=256)
        if device == "cuda":
            torch.cuda.synchronize()
        out[name] = f"{len(texts) / (time.time() - started):,.0f}/s"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
