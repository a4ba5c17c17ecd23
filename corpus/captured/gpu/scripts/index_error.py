"""Token ids larger than the embedding table (a tokenizer with a bigger vocab),
a bad gather index, or a class label out of range in cross_entropy."""
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1] if len(sys.argv) > 1 else "embedding"
torch.manual_seed(0)
dev = torch.device("cuda")


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        return self.head(torch.tanh(self.proj(self.embed(ids))))


model = TinyLM().to(dev)
print(f"model on {dev}, vocab={model.embed.num_embeddings}", flush=True)

if mode == "embedding":
    for step in range(3):
        ids = torch.randint(0, 32000 if step < 2 else 32128, (8, 512), device=dev)
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), ids.view(-1) % 32000)
        loss.backward()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
elif mode == "gather":
    scores = torch.randn(64, 1000, device=dev)
    topk = torch.randint(0, 1000, (64, 5), device=dev)
    topk[3, 2] = 1000
    picked = torch.gather(scores, 1, topk)
    print("picked mean", picked.mean().item(), flush=True)
elif mode == "labels":
    logits = torch.randn(256, 10, device=dev, requires_grad=True)
    labels = torch.randint(1, 11, (256,), device=dev)  # 1-based labels, 10 classes
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    print("loss", loss.item(), flush=True)
elif mode == "followup":
    # an evaluation loop that logs a failed batch and goes on
    import logging
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("eval")
    for batch in range(4):
        try:
            hi = 32000 if batch != 1 else 40000
            ids = torch.randint(0, hi, (4, 256), device=dev)
            with torch.no_grad():
                logits = model(ids)
            ppl = torch.exp(F.cross_entropy(logits.view(-1, 32000), ids.view(-1) % 32000))
            log.info("batch %d ppl %.2f", batch, ppl.item())
        except RuntimeError:
            log.exception("batch %d failed, skipping", batch)
            if batch >= 2:
                raise
