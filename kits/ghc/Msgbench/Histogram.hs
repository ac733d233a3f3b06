-- | The latency histogram layout of msgbench/core/histogram.py: log-linear,
-- 64 sub-buckets per power of two, values below 128 exact. Chat's clients
-- count into an IntMap keyed by 'bucket'.
module Msgbench.Histogram (bucket) where

import Data.Bits (countLeadingZeros, shiftR)
import Data.Int (Int64)

-- | The bucket index of a value (ns); negative values count as 0.
bucket :: Int64 -> Int
bucket v
  | v < 128 = fromIntegral (max 0 v)
  | otherwise =
      let bitLength = 64 - countLeadingZeros v
          sh = bitLength - 7
       in sh * 64 + fromIntegral (v `shiftR` sh)
