-- | Clocks and memory, raw: monotonic ns, process CPU ns, peak RSS.
module Msgbench.Measure (nowNs, cpuNs, peakRssBytes, rssBytes, statusBytes) where

import qualified Data.ByteString.Char8 as BC
import Data.Int (Int64)
import Data.Maybe (mapMaybe)
import GHC.Clock (getMonotonicTimeNSec)
import System.CPUTime (getCPUTime)

-- | The monotonic clock, ns.
nowNs :: IO Int64
nowNs = fromIntegral <$> getMonotonicTimeNSec

-- | CPU time of the whole process (every OS thread), ns.
cpuNs :: IO Int64
cpuNs = (\ps -> fromIntegral (ps `div` 1000)) <$> getCPUTime

-- | A line of /proc/self/status in kB, as bytes (0 when absent).
statusBytes :: String -> IO Int64
statusBytes field = do
  s <- BC.readFile "/proc/self/status"
  let pick l = case BC.words l of
        (k : v : _) | k == BC.pack (field ++ ":") -> fst <$> BC.readInteger v
        _ -> Nothing
  pure $ case mapMaybe pick (BC.lines s) of
    (v : _) -> fromIntegral v * 1024
    [] -> 0

-- | Peak resident set size (VmHWM).
peakRssBytes :: IO Int64
peakRssBytes = statusBytes "VmHWM"

-- | Current resident set size (VmRSS).
rssBytes :: IO Int64
rssBytes = statusBytes "VmRSS"
