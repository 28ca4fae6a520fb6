"""npm run train:descriptor -- TRAIN.bin [TRAIN2.bin ...] --val VAL.bin --out NET.rdn [--epochs 8] [--pairs-per-epoch 60000]
                                [--widths 16,32,32,64] [--batch 512] [--lr 2e-3] [--seed 1] [--degrade 0.5]
                                [--init NET.rdn] [--threads 2]

Trains the learned patch descriptor (lib/biometrics/descriptor-net.ts) on generator-true keypoint partners
exported by `npm run export:patches` (lab/scripts/export-patches.ts). Needs PyTorch on the machine's own Python
(Debian: `apt-get install python3-torch`; PyPI is not reachable here), hence /usr/bin/python3.

Network: 3 x 3 convolutions (ReLU) with strides 1, 2, 1, 2 and the given widths, then a linear layer to 128,
L2-normalised; the input patch is standardised (mean 0, std 1) first, as the TypeScript inference does.
Loss (--loss): "infonce" (default), the symmetric cross-entropy of each patch's similarities to every patch of the
other side of the batch, its partner the target (temperature 0.05); or "hardnet", the hardest-in-batch triplet
margin loss of HardNet (Mishchuk et al. 2017), which on these patches collapses every descriptor onto nearly one
vector (loss stuck at the margin; the partner still nearest by float differences that int8 storage erases).
Adam with a one-cycle rate. --init starts from a weights file's layers (its widths and output count, e.g. the
engine's folded 64-output network, which is then written with 64 outputs and needs no fold).
Domain randomisation (--degrade P, 0 = off): in each batch a share P of the pairs has ONE side, chosen at random,
degraded as real genuine pairs fail (one sharp photo, one soft: docs/engine.md): a strong Gaussian defocus or a
motion blur of that patch only (with probability 0.8), a tone curve (gamma 0.5-2) and a contrast loss with noise
(an almost black pad keeps few grey levels of relief: 0.6), a small affine warp (0.4). Patches are in the units
of the contrast-normalised image at the keypoint's scale level, one patch pixel 10 sigma / 16.
After every epoch: on up to 2,048 validation pairs, how often the partner is the nearest of all validation
partners (both directions), clean and with one side degraded (a fixed draw). Writes the RDN1 weights file with 4 validation patches and their outputs as checks.
"""

import argparse
import sys
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
    def __init__(self, widths, dims=DIMS):
        super().__init__()
        strides = [1, 2, 1, 2]
        layers = []
        channels = 1
        for width, stride in zip(widths, strides):
            layers.append(nn.Conv2d(channels, width, 3, stride=stride, padding=1))
            channels = width
        self.convs = nn.ModuleList(layers)
        self.linear = nn.Linear(channels * (PATCH // 4) ** 2, dims)

    def forward(self, x):
        flat = x.view(x.shape[0], -1)
        mean = flat.mean(dim=1, keepdim=True)
        std = (flat.pow(2).mean(dim=1, keepdim=True) - mean.pow(2)).clamp(min=0).sqrt() + 1e-6
        x = ((flat - mean) / std).view_as(x)
        for conv in self.convs:
            x = F.relu(conv(x))
        return F.normalize(self.linear(x.flatten(1)), dim=1)


def gaussian_kernels(sigma, size):
    """One normalised size x size Gaussian per sigma: (N, 1, size, size)."""
    centre = (size - 1) / 2
    axis = torch.arange(size, dtype=torch.float32) - centre
    g = torch.exp(-(axis.view(1, -1) ** 2) / (2 * sigma.view(-1, 1) ** 2))
    kernel = g.unsqueeze(2) * g.unsqueeze(1)
    return (kernel / kernel.sum(dim=(1, 2), keepdim=True)).unsqueeze(1)


def motion_kernels(length, angle, size):
    """One normalised line kernel per (length, angle), half a pixel wide: (N, 1, size, size)."""
    centre = (size - 1) / 2
    axis = torch.arange(size, dtype=torch.float32) - centre
    y, x = torch.meshgrid(axis, axis, indexing="ij")
    cos, sin = torch.cos(angle).view(-1, 1, 1), torch.sin(angle).view(-1, 1, 1)
    along = x * cos + y * sin
    across = -x * sin + y * cos
    inside = torch.sigmoid(4 * (length.view(-1, 1, 1) / 2 - along.abs()))
    kernel = torch.exp(-(across**2) / (2 * 0.5**2)) * inside
    return (kernel / kernel.sum(dim=(1, 2), keepdim=True)).unsqueeze(1)


def filter_each(x, kernels):
    """Each patch of x (N, 1, H, W) filtered by its own kernel, borders replicated."""
    size = kernels.shape[-1]
    padded = F.pad(x, [size // 2] * 4, mode="replicate")
    return F.conv2d(padded.view(1, len(x), *padded.shape[2:]), kernels, groups=len(x)).view_as(x)


def degrade(x, generator):
    """Every patch of x degraded independently as a soft, dark or differently seen capture (see the docstring)."""
    n = len(x)
    u = lambda *shape: torch.rand(*shape, generator=generator)
    out = x.clone()
    size = 11
    blur = u(n) < 0.8
    motion = u(n) < 0.4
    sigma = 0.6 + 1.9 * u(n)
    length = 2.0 + 6.0 * u(n)
    angle = np.pi * u(n)
    kernels = torch.where(motion.view(-1, 1, 1, 1), motion_kernels(length, angle, size), gaussian_kernels(sigma, size))
    out = torch.where(blur.view(-1, 1, 1, 1), filter_each(out, kernels), out)
    warp = u(n) < 0.4
    turn = (u(n) - 0.5) * 0.25
    scale = 1 + (u(n) - 0.5) * 0.2
    shear = (u(n) - 0.5) * 0.16
    shift = (u(n, 2) - 0.5) * 0.1
    theta = torch.stack(
        [
            torch.stack([scale * torch.cos(turn), -scale * torch.sin(turn) + shear, shift[:, 0]], dim=1),
            torch.stack([scale * torch.sin(turn), scale * torch.cos(turn), shift[:, 1]], dim=1),
        ],
        dim=1,
    )
    grid = F.affine_grid(theta, list(out.shape), align_corners=False)
    out = torch.where(warp.view(-1, 1, 1, 1), F.grid_sample(out, grid, padding_mode="border", align_corners=False), out)
    tone = u(n) < 0.6
    low = out.amin(dim=(1, 2, 3), keepdim=True)
    high = out.amax(dim=(1, 2, 3), keepdim=True)
    unit = ((out - low) / (high - low + 1e-6)).clamp(0, 1)
    gamma = torch.exp((u(n) - 0.5) * 2 * np.log(2)).view(-1, 1, 1, 1)
    contrast = (0.25 + 0.75 * u(n)).view(-1, 1, 1, 1)
    toned = low + (high - low) * contrast * unit.pow(gamma)
    out = torch.where(tone.view(-1, 1, 1, 1), toned, out)
    noisy = u(n) < 0.6
    spread = out.std(dim=(1, 2, 3), keepdim=True)
    noise = torch.randn(out.shape, generator=generator) * spread * (0.05 + 0.25 * u(n)).view(-1, 1, 1, 1)
    out = torch.where(noisy.view(-1, 1, 1, 1), out + noise, out)
    return torch.round(out * QUANT).clamp(-127, 127) / QUANT


def degrade_one_side(a, b, share, generator):
    """A share of the pairs get one side (a or b, at random) degraded; the other side stays as it is."""
    if share <= 0:
        return a, b
    chosen = torch.rand(len(a), generator=generator) < share
    side_a = chosen & (torch.rand(len(a), generator=generator) < 0.5)
    side_b = chosen & ~side_a
    da, db = degrade(a, generator), degrade(b, generator)
    mask = lambda m: m.view(-1, 1, 1, 1)
    return torch.where(mask(side_a), da, a), torch.where(mask(side_b), db, b)


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


def read_weights(path):
    """The layers of an RDN1 file (write_weights' layout): a list of (kind, stride, weight, bias) arrays."""
    raw = open(path, "rb").read()
    assert raw[:4] == b"RDN1", f"{path}: not an RDN1 file"
    count = struct.unpack_from("<I", raw, 4)[0]
    at = 8
    layers = []
    for _ in range(count):
        kind, stride, _relu, _pad, inputs, outputs = struct.unpack_from("<BBBBII", raw, at)
        at += 12
        size = outputs * inputs * (9 if kind == 1 else 1)
        weight = np.frombuffer(raw, dtype="<f4", count=size, offset=at).copy()
        at += 4 * size
        bias = np.frombuffer(raw, dtype="<f4", count=outputs, offset=at).copy()
        at += 4 * outputs
        shape = (outputs, inputs, 3, 3) if kind == 1 else (outputs, inputs)
        layers.append((kind, stride, weight.reshape(shape), bias))
    return layers


def net_from_weights(path):
    layers = read_weights(path)
    convs = [layer for layer in layers if layer[0] == 1]
    net = DescriptorNet([w.shape[0] for _, _, w, _ in convs], dims=layers[-1][2].shape[0])
    with torch.no_grad():
        for module, (_, _, weight, bias) in zip(list(net.convs) + [net.linear], layers):
            module.weight.copy_(torch.from_numpy(weight))
            module.bias.copy_(torch.from_numpy(bias))
    return net


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
    parser.add_argument("--degrade", type=float, default=0.0)
    parser.add_argument("--init")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    parts = [read_pairs(path) for path in args.train]
    a, b = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    va, vb = read_pairs(args.val)
    generator = torch.Generator().manual_seed(args.seed)
    pick = torch.randperm(len(va), generator=generator)[:2048]
    va, vb = va[pick], vb[pick]
    # The degraded validation pairs: every pair with one side degraded, a fixed draw.
    vda, vdb = degrade_one_side(va, vb, 1.0, torch.Generator().manual_seed(args.seed + 1))
    augment = torch.Generator().manual_seed(args.seed + 2)
    net = net_from_weights(args.init) if args.init else DescriptorNet([int(w) for w in args.widths.split(",")])
    parameters = sum(p.numel() for p in net.parameters())
    steps = args.epochs * (args.pairs_per_epoch // args.batch)
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=args.lr, total_steps=steps)
    print(f"{len(a)} training pairs, {len(va)} validation pairs, {parameters} parameters, {steps} steps; "
          f"validation nearest before training {100 * nearest_rate(net, va, vb):.1f} %, one side degraded "
          f"{100 * nearest_rate(net, vda, vdb):.1f} %", flush=True)
    progress = Progress("training", steps)
    for epoch in range(args.epochs):
        started = time.time()
        order = torch.randperm(len(a), generator=generator)[: args.pairs_per_epoch]
        total = 0.0
        batches = 0
        for start in range(0, len(order) - args.batch + 1, args.batch):
            index = order[start : start + args.batch]
            pa, pb = degrade_one_side(a[index], b[index], args.degrade, augment)
            da, db = net(pa), net(pb)
            loss = infonce_loss(da, db, args.temperature) if args.loss == "infonce" else hardnet_loss(da, db)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss)
            batches += 1
            progress.tick()
        progress.pause()
        print(f"epoch {epoch + 1}: loss {total / batches:.4f}, validation nearest {100 * nearest_rate(net, va, vb):.1f} %, "
              f"one side degraded {100 * nearest_rate(net, vda, vdb):.1f} %, "
              f"{time.time() - started:.0f} s", flush=True)
    write_weights(net, args.out, va[:4])
    print(f"wrote {args.out}")


class Progress:
    """Steps done and the ETA on stderr, as the TypeScript commands' progress bars (lib/progress.ts): redrawn in place
    on a terminal, else a line every tenth of the run."""

    def __init__(self, label, total):
        self.label, self.total, self.done, self.started, self.tty = label, max(1, total), 0, time.time(), sys.stderr.isatty()

    def tick(self):
        self.done += 1
        tenth = max(1, self.total // 10)
        if not self.tty and self.done % tenth != 0 and self.done != self.total:
            return
        elapsed = time.time() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        line = f"{self.label} {100 * self.done / self.total:.0f} % {self.done}/{self.total} | ETA {eta // 60:.0f} min {eta % 60:02.0f} s"
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def pause(self):
        """Ends the bar's line so that other output (an epoch's figures) starts on its own."""
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


if __name__ == "__main__":
    main()
