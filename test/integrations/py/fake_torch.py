"""Just enough of torch, a tokenizer and verl's DataProto to run CorlRewardManager.__call__ without
them: 2-D integer tensors as lists of rows, left-padded prompts, right-padded responses."""

float32 = "float32"
PAD = 0


class Tensor:
    def __init__(self, rows):
        self.rows = [list(r) for r in rows] if rows and isinstance(rows[0], (list, tuple)) else list(rows)

    @property
    def shape(self):
        return (len(self.rows), len(self.rows[0])) if self.rows and isinstance(self.rows[0], list) else (len(self.rows),)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        if isinstance(i, tuple):
            r, c = i
            return self.rows[r][c]
        x = self.rows[i]
        return Tensor(x) if isinstance(x, list) else x

    def __setitem__(self, i, value):
        r, c = i
        self.rows[r][c] = value

    def __iter__(self):
        return iter(self.rows)

    def sum(self):
        return sum(self.rows)

    def tolist(self):
        return [list(r) for r in self.rows] if self.rows and isinstance(self.rows[0], list) else list(self.rows)


def zeros_like(t, dtype=None):
    return Tensor([[0.0] * len(r) for r in t.rows])


class Tokenizer:
    """Token i is the i-th word of the text that made it (see encode); 0 is padding."""

    def __init__(self):
        self.words = ["<pad>"]

    def encode(self, text):
        ids = []
        for w in text.split(" "):
            self.words.append(w)
            ids.append(len(self.words) - 1)
        return ids

    def decode(self, ids, skip_special_tokens=True):
        ids = ids.rows if isinstance(ids, Tensor) else ids
        return " ".join(self.words[i] for i in ids if i != PAD)


class DataProto:
    def __init__(self, batch, non_tensor_batch, meta_info):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch
        self.meta_info = meta_info

    def __len__(self):
        return len(self.batch["responses"])


def data_proto(rows, step):
    """rows: [{"prompt": [ids], "response": [ids], "uid", "index"}] (token ids from Tokenizer.encode)."""
    p_len = max(len(r["prompt"]) for r in rows)
    r_len = max(len(r["response"]) for r in rows)
    prompts = [[PAD] * (p_len - len(r["prompt"])) + r["prompt"] for r in rows]
    responses = [r["response"] + [PAD] * (r_len - len(r["response"])) for r in rows]
    mask = [[0] * (p_len - len(r["prompt"])) + [1] * len(r["prompt"]) + [1] * len(r["response"]) + [0] * (r_len - len(r["response"])) for r in rows]
    batch = {"prompts": Tensor(prompts), "responses": Tensor(responses), "attention_mask": Tensor(mask)}
    nt = {"uid": [r["uid"] for r in rows], "extra_info": [{"index": r["index"]} for r in rows]}
    return DataProto(batch, nt, {"global_steps": step})
