"""Fields of the lane buffers (``topology``'s layout) as unsigned constants, for the lane
kernels (``kernels_direct``, ``kernels_chain``, ``kernels_bending``, ``kernels_resolve``).

Mixing uint64 indices with int64 values makes numba promote to float64, and signed indices
cost LLVM the proof it needs to vectorise. Each kernel scales them by its lane count L, a
literal per compiled variant, so LLVM folds the offsets into constants.
"""

from __future__ import annotations

import numpy as np

from .topology import (
    EDGE_ACTIVE,
    EDGE_COMPLIANCE,
    EDGE_G,
    EDGE_INVERSE_REST,
    EDGE_LAMBDA,
    EDGE_LAMBDA_STAR,
    EDGE_N,
    EDGE_RESIDUAL,
    EDGE_REST,
    EDGE_STRIDE,
    EDGE_TENSION,
    PARTICLE_ACCELERATION,
    PARTICLE_BEND_COMPLIANCE,
    PARTICLE_BEND_D_INVERSE,
    PARTICLE_BEND_L1,
    PARTICLE_BEND_L2,
    PARTICLE_BEND_Y,
    PARTICLE_K,
    PARTICLE_RESIDUAL_MAX,
    PARTICLE_STRIDE,
    PARTICLE_TETHER,
    PARTICLE_U,
    PARTICLE_V,
    PARTICLE_V_OLD,
    PARTICLE_W,
    PARTICLE_X,
    PARTICLE_X_OLD,
    PARTICLE_X_PRED,
    PARTICLE_X_PREV,
    PARTICLE_Y,
)

_FX = np.uint64(PARTICLE_X)
_FA = np.uint64(PARTICLE_ACCELERATION)
_FV = np.uint64(PARTICLE_V)
_FXP = np.uint64(PARTICLE_X_PREV)
_FW = np.uint64(PARTICLE_W)
_FT = np.uint64(PARTICLE_TETHER)
_FBA = np.uint64(PARTICLE_BEND_COMPLIANCE)
_FBL1 = np.uint64(PARTICLE_BEND_L1)
_FBL2 = np.uint64(PARTICLE_BEND_L2)
_FBD = np.uint64(PARTICLE_BEND_D_INVERSE)
_FBY = np.uint64(PARTICLE_BEND_Y)
_FIR = np.uint64(EDGE_INVERSE_REST)
_FREST = np.uint64(EDGE_REST)
_FALPHA = np.uint64(EDGE_COMPLIANCE)
_FACTIVE = np.uint64(EDGE_ACTIVE)
_FN = np.uint64(EDGE_N)
_FG = np.uint64(EDGE_G)
_FLSTAR = np.uint64(EDGE_LAMBDA_STAR)
_FLAMBDA = np.uint64(EDGE_LAMBDA)
_FRESIDUAL = np.uint64(EDGE_RESIDUAL)
_FTENSION = np.uint64(EDGE_TENSION)
_FXT = np.uint64(PARTICLE_X_PRED)
_FK = np.uint64(PARTICLE_K)
_FY = np.uint64(PARTICLE_Y)
_FU = np.uint64(PARTICLE_U)
_FRMAX = np.uint64(PARTICLE_RESIDUAL_MAX)
_FXO = np.uint64(PARTICLE_X_OLD)
_FVO = np.uint64(PARTICLE_V_OLD)
_PSTRIDE = np.uint64(PARTICLE_STRIDE)
_ESTRIDE = np.uint64(EDGE_STRIDE)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TWO = np.uint64(2)
