-- | The Haskell tests' harness, the kit's and a target's: every check is counted
-- rather than the run stopping at the first failure, then one "N passed, M failed"
-- line and a failing exit status if any failed.
module Msgbench.Check (Counter, newCounter, check, finish) where

import Control.Monad (unless, when)
import Data.IORef (IORef, modifyIORef', newIORef, readIORef)
import System.Exit (exitFailure)

type Counter = IORef (Int, Int)

newCounter :: IO Counter
newCounter = newIORef (0, 0)

check :: Counter -> String -> Bool -> IO ()
check counter name ok = do
  modifyIORef' counter (\(p, f) -> if ok then (p + 1, f) else (p, f + 1))
  unless ok (putStrLn ("FAIL: " ++ name))

finish :: Counter -> IO ()
finish counter = do
  (passed, failed) <- readIORef counter
  putStrLn (show passed ++ " passed, " ++ show failed ++ " failed")
  when (failed > 0) exitFailure
