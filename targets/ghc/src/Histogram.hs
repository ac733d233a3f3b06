-- | The latency histogram layout of msgbench/histogram.py: log-linear,
-- 64 sub-buckets per power of two, values below 128 exact.
module Histogram (bucket, Hist, newHist, record, sparse, merge) where

import Control.Monad (forM)
import Data.Bits (countLeadingZeros, shiftR)
import Data.Int (Int64)
import qualified Data.IntMap.Strict as IM
import Data.IORef (IORef, modifyIORef', newIORef, readIORef)

-- | The bucket index of a value (ns); negative values count as 0.
bucket :: Int64 -> Int
bucket v
  | v < 128 = fromIntegral (max 0 v)
  | otherwise =
      let bitLength = 64 - countLeadingZeros v
          sh = bitLength - 7
       in sh * 64 + fromIntegral (v `shiftR` sh)

-- | One thread's histogram (owned by that thread: no lock).
type Hist = IORef (IM.IntMap Int64)

newHist :: IO Hist
newHist = newIORef IM.empty

record :: Hist -> Int64 -> IO ()
record h v = modifyIORef' h (IM.insertWith (+) (bucket v) 1)

-- | Adds many histograms into one sparse list of (bucket, count).
merge :: [Hist] -> IO [(Int, Int64)]
merge hs = do
  ms <- forM hs readIORef
  pure (IM.toAscList (IM.unionsWith (+) ms))

sparse :: Hist -> IO [(Int, Int64)]
sparse h = IM.toAscList <$> readIORef h
