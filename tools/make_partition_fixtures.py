#!/usr/bin/env python3
"""Write the small tensor files the partition tests read (tests/data/partition/):
the same 3x2 and 2-value tensors in every format comet's reader takes.

  w.npy            float32 (2, 3) [[1, 2, 3], [4, 5, 6]], C order
  w_fortran.npy    the same values, Fortran order
  w_big.npy        the same values, big-endian float64
  compressed.npz   np.savez_compressed: fc1.weight (2, 3) float32, fc1.bias [0.5, -0.5] float16
  model.safetensors  fc1.weight (2, 3) F32, fc1.bias (2,) BF16 [0.5, -0.5], with __metadata__

Rerun: python3 tools/make_partition_fixtures.py
"""
import json
import struct

import numpy as np

OUT = "tests/data/partition/"
w = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
np.save(OUT + "w.npy", w)
np.save(OUT + "w_fortran.npy", np.asfortranarray(w))
np.save(OUT + "w_big.npy", w.astype(">f8"))
np.savez_compressed(OUT + "compressed.npz", **{"fc1.weight": w,
                                               "fc1.bias": np.array([0.5, -0.5], np.float16)})
weight = w.tobytes()
bias = struct.pack("<HH", 0x3f00, 0xbf00)  # bf16 0.5, -0.5
header = {"__metadata__": {"format": "pt"},
          "fc1.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, len(weight)]},
          "fc1.bias": {"dtype": "BF16", "shape": [2],
                       "data_offsets": [len(weight), len(weight) + len(bias)]}}
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(OUT + "model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + weight + bias)
