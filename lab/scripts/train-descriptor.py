"""npm run train:descriptor -- TRAIN.bin [TRAIN2.bin ...] --val VAL.bin --out NET.rdn [--epochs 8] [--pairs-per-epoch 60000]
                                [--widths 16,32,32,64] [--batch 512] [--lr 2e-3] [--seed 1]

Trains the learned patch descriptor (lib/biometrics/descriptor-net.ts) on generator-true keypoint partners
exported by `npm run export:patches` (scripts/export-patches.ts). Needs PyTorch on the machine's own Python
(Debian: `apt-get install python3-torch`; PyPI is not reachable here), hence /usr/bin/python3.

Network: 3 x 3 convolutions (ReLU) with strides 1, 2, 1, 2 and the given widths, then a linear layer to 128,
L2-normalised; the input patch is standardised (mean 0, std 1) first, as the TypeScript inference does.
Loss (--loss): "infonce" (default), the symmetric cross-entropy of each patch's similarities to every patch of the
other side of the batch, its partner the target (temperature 0.05); or "hardnet", the hardest-in-batch triplet
margin loss of HardNet (Mishchuk et al. 2017), which on these patches collapses every descriptor onto nearly one
vector (loss stuck at the margin; the partner still nearest by float differences that int8 storage erases).
Adam with a one-cycle rate.
After every epoch: on up to 2,048 validation pairs, how often the partner is the nearest of all validation
partners (both directions). Writes the RDN1 weights file with 4 validation patches and their outputs as checks.
"""

import argparse
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PATCH = 16
QUANT = 32.0
DIMS = 128


def read_pairs(path):
    raw = open(path, "rb").read()
    assert raw[:4] == b"RPP1", f"{path}: not an RPP1 file"
    count = struct.unpack_from("<I", raw, 4)[0]
    record = np.dtype([("subject", "<i4"), ("a", "i1", PATCH * PATCH), ("b", "i1", PATCH * PATCH)])
    data = np.frombuffer(raw, dtype=record, count=count, offset=8)
    a = torch.from_numpy(data["a"].astype(np.float32) / QUANT).view(-1, 1, PATCH, PATCH)
    b = torch.from_numpy(data["b"].astype(np.float32) / QUANT).view(-1, 1, PATCH, PATCH)
    return a, b


class DescriptorNet(nn.Module):
    def __init__(self, widths):
        super().__init__()
        strides = [1, 2, 1, 2]
        layers = []
        channels = 1
        for width, stride in zip(widths, strides):
            layers.append(nn.Conv2d(channels, width, 3, stride=stride, padding=1))
            channels = width
        self.convs = nn.ModuleList(layers)
        self.linear = nn.Linear(channels * (PATCH // 4) ** 2, DIMS)

    def forward(self, x):
        flat = x.view(x.shape[0], -1)
        mean = flat.mean(dim=1, keepdim=True)
        std = (flat.pow(2).mean(dim=1, keepdim=True) - mean.pow(2)).clamp(min=0).sqrt() + 1e-6
        x = ((flat - mean) / std).view_as(x)
        for conv in self.convs:
            x = F.relu(conv(x))
        return F.normalize(self.linear(x.flatten(1)), dim=1)


def infonce_loss(da, db, temperature):
    logits = (da @ db.T) / temperature
    target = torch.arange(len(da))
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


def hardnet_loss(da, db, margin=1.0):
    distance = torch.cdist(da, db)
    positive = distance.diag()
    masked = distance + torch.eye(distance.shape[0]) * 10.0
    negative = torch.minimum(masked.min(dim=1).values, masked.min(dim=0).values)
    return F.relu(margin + positive - negative).mean()


@torch.no_grad()
def nearest_rate(net, a, b):
    net.eval()
    da, db = net(a), net(b)
    similarity = da @ db.T
    hits = (similarity.argmax(dim=1) == torch.arange(len(a))).float().mean() + (similarity.argmax(dim=0) == torch.arange(len(a))).float().mean()
    net.train()
    return float(hits / 2)


def write_weights(net, path, checks):
    out = bytearray(b"RDN1")
    layers = [(1, conv.stride[0], 1, conv) for conv in net.convs] + [(2, 1, 0, net.linear)]
    out += struct.pack("<I", len(layers))
    for kind, stride, relu, module in layers:
        weight = module.weight.detach().numpy().astype("<f4")
        inputs = weight.shape[1]
        out += struct.pack("<BBBBII", kind, stride, relu, 0, inputs, weight.shape[0])
        out += weight.tobytes() + module.bias.detach().numpy().astype("<f4").tobytes()
    net.eval()
    with torch.no_grad():
        outputs = net(checks)
    out += struct.pack("<I", len(checks))
    for patch, output in zip(checks, outputs):
        out += patch.numpy().astype("<f4").tobytes() + output.numpy().astype("<f4").tobytes()
    open(path, "wb").write(bytes(out))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train", nargs="+")
    parser.add_argument("--val", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--pairs-per-epoch", type=int, default=60000)
    parser.add_argument("--widths", default="16,32,32,64")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loss", choices=["infonce", "hardnet"], default="infonce")
    parser.add_argument("--temperature", type=float, default=0.05)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    parts = [read_pairs(path) for path in args.train]
    a, b = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    va, vb = read_pairs(args.val)
    generator = torch.Generator().manual_seed(args.seed)
    pick = torch.randperm(len(va), generator=generator)[:2048]
    va, vb = va[pick], vb[pick]
    net = DescriptorNet([int(w) for w in args.widths.split(",")])
    parameters = sum(p.numel() for p in net.parameters())
    steps = args.epochs * (args.pairs_per_epoch // args.batch)
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=args.lr, total_steps=steps)
    print(f"{len(a)} training pairs, {len(va)} validation pairs, {parameters} parameters, {steps} steps; "
          f"validation nearest before training {100 * nearest_rate(net, va, vb):.1f} %", flush=True)
    for epoch in range(args.epochs):
        started = time.time()
        order = torch.randperm(len(a), generator=generator)[: args.pairs_per_epoch]
        total = 0.0
        batches = 0
        for start in range(0, len(order) - args.batch + 1, args.batch):
            index = order[start : start + args.batch]
            da, db = net(a[index]), net(b[index])
            loss = infonce_loss(da, db, args.temperature) if args.loss == "infonce" else hardnet_loss(da, db)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss)
            batches += 1
        print(f"epoch {epoch + 1}: loss {total / batches:.4f}, validation nearest {100 * nearest_rate(net, va, vb):.1f} %, "
              f"{time.time() - started:.0f} s", flush=True)
    write_weights(net, args.out, va[:4])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
