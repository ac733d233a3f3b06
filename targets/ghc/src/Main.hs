{-# LANGUAGE OverloadedStrings #-}
-- | The msgbench worker for GHC (the kit's 'worker': one request on stdin,
-- JSON lines on stdout). With --serve it is the socket workload's server half.
module Main (main) where

import Chat (measureChat)
import Fanin (measureFanin)
import Msgbench.Sample (period, rtsValues, sampled)
import Msgbench.Worker (worker)
import Ring (measureRing)
import Socket (measureSocket, serveMain)
import System.Environment (getArgs)

main :: IO ()
main = do
  args <- getArgs
  if "--serve" `elem` args
    then serveMain
    else
      worker "ghc"
        [ ("ring", measureRing)
        , ("fanin", measureFanin)
        , ("socket", measureSocket)
        , ("chat", sampled period rtsValues . measureChat)
        ]
