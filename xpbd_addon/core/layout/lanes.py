"""Fields of the lane buffers (declared in ``topology``) as unsigned constants, for the lane
kernels (``kernels_direct``, ``kernels_chain``, ``kernels_joint``, ``kernels_resolve``).

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
    EDGE_HOLD,
    EDGE_HOLD_AT,
    EDGE_HOLD_C,
    EDGE_HOLD_MU,
    EDGE_HOLD_ON,
    EDGE_HOLD_S,
    EDGE_HOLD_T,
    EDGE_HOLD_X,
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
    PARTICLE_BEND_FORCE,
    PARTICLE_BEND_TARGET,
    PARTICLE_BEND_WEIGHT,
    PARTICLE_JOINT_DEN,
    PARTICLE_JOINT_FRONT,
    PARTICLE_JOINT_PHI,
    PARTICLE_JOINT_Q,
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

FX = np.uint64(PARTICLE_X)
FA = np.uint64(PARTICLE_ACCELERATION)
FV = np.uint64(PARTICLE_V)
FXP = np.uint64(PARTICLE_X_PREV)
FW = np.uint64(PARTICLE_W)
FT = np.uint64(PARTICLE_TETHER)
FBA = np.uint64(PARTICLE_BEND_COMPLIANCE)
FBW = np.uint64(PARTICLE_BEND_WEIGHT)
FBF = np.uint64(PARTICLE_BEND_FORCE)
FJP = np.uint64(PARTICLE_JOINT_PHI)
FJQ = np.uint64(PARTICLE_JOINT_Q)
FJD = np.uint64(PARTICLE_JOINT_DEN)
FJF = np.uint64(PARTICLE_JOINT_FRONT)
FBT = np.uint64(PARTICLE_BEND_TARGET)
FIR = np.uint64(EDGE_INVERSE_REST)
FREST = np.uint64(EDGE_REST)
FALPHA = np.uint64(EDGE_COMPLIANCE)
FACTIVE = np.uint64(EDGE_ACTIVE)
FN = np.uint64(EDGE_N)
FG = np.uint64(EDGE_G)
FLSTAR = np.uint64(EDGE_LAMBDA_STAR)
FLAMBDA = np.uint64(EDGE_LAMBDA)
FRESIDUAL = np.uint64(EDGE_RESIDUAL)
FTENSION = np.uint64(EDGE_TENSION)
FH = np.uint64(EDGE_HOLD)
FHS = np.uint64(EDGE_HOLD_S)
FHAT = np.uint64(EDGE_HOLD_AT)
FHON = np.uint64(EDGE_HOLD_ON)
FHC = np.uint64(EDGE_HOLD_C)
FHX = np.uint64(EDGE_HOLD_X)
FHT = np.uint64(EDGE_HOLD_T)
FHMU = np.uint64(EDGE_HOLD_MU)
FXT = np.uint64(PARTICLE_X_PRED)
FK = np.uint64(PARTICLE_K)
FY = np.uint64(PARTICLE_Y)
FU = np.uint64(PARTICLE_U)
FRMAX = np.uint64(PARTICLE_RESIDUAL_MAX)
FXO = np.uint64(PARTICLE_X_OLD)
FVO = np.uint64(PARTICLE_V_OLD)
PSTRIDE = np.uint64(PARTICLE_STRIDE)
ESTRIDE = np.uint64(EDGE_STRIDE)
ONE = np.uint64(1)
ZERO = np.uint64(0)
TWO = np.uint64(2)
