{-# LANGUAGE OverloadedStrings #-}
-- | The worker contract (spec/README.md, "The worker protocol"): one JSON
-- request in, JSON lines out (hello, progress, samples, then a result or an
-- error).
module Msgbench.Protocol
  ( Kind (..)
  , WorkerError (..)
  , failWith
  , classify
  , Request (..)
  , readRequest
  , param
  , paramOr
  , Result (..)
  , emptyResult
  , say
  , helloLine
  , progressLine
  , sampleLine
  , errorLine
  , resultLine
  ) where

import Control.Exception (Exception, SomeException, displayException, fromException, throwIO)
import Data.Aeson (FromJSON, Value (..), eitherDecodeStrict', encode, object, (.=))
import qualified Data.Aeson.Key as Key
import qualified Data.Aeson.KeyMap as KM
import Data.Aeson.Types (parseEither, parseJSON)
import qualified Data.ByteString as B
import qualified Data.ByteString.Lazy as BL
import Data.Int (Int64)
import Data.Text (Text)
import qualified Data.Text as T
import System.IO (hFlush, stdout)

-- | The error kinds a worker may answer.
data Kind = Unsupported | Resource | Internal deriving (Eq, Show)

kindName :: Kind -> Text
kindName Unsupported = "unsupported"
kindName Resource = "resource"
kindName Internal = "internal"

-- | A reported error: thrown by a workload, caught by the worker loop.
data WorkerError = WorkerError Kind String deriving (Show)

instance Exception WorkerError

failWith :: Kind -> String -> IO a
failWith k msg = throwIO (WorkerError k msg)

-- | What an exception escaping a workload is reported as: a 'WorkerError' as
-- itself, anything else (a bug) as internal.
classify :: SomeException -> (Kind, String)
classify e = case fromException e of
  Just (WorkerError k msg) -> (k, msg)
  Nothing -> (Internal, "uncaught exception: " ++ displayException e)

data Request = Request
  { reqWorkload :: Text
  , reqVariant :: Text
  , reqOptions :: KM.KeyMap Value
  , reqParams :: KM.KeyMap Value
  , reqRaw :: B.ByteString
  -- ^ the line as read: a worker hands it on to its server half unchanged
  }

-- | Parses the one request line; Left says what is wrong with it.
readRequest :: B.ByteString -> Either String Request
readRequest line = do
  v <- eitherDecodeStrict' line
  case v of
    Object o -> do
      workload <- str o "workload"
      variant <- str o "variant"
      opts <- obj o "options"
      params <- obj o "params"
      Right (Request workload variant opts params line)
    _ -> Left "the request is not a JSON object"
  where
    str o k = case KM.lookup k o of
      Just (String s) -> Right s
      Just Null -> Right ""
      Nothing -> Right ""
      _ -> Left ("request." ++ Key.toString k ++ " is not a string")
    obj o k = case KM.lookup k o of
      Just (Object x) -> Right x
      Nothing -> Right KM.empty
      Just Null -> Right KM.empty
      _ -> Left ("request." ++ Key.toString k ++ " is not an object")

-- | A parameter, as the harness filled in and checked it.
param :: FromJSON a => Request -> Text -> IO a
param req name = case KM.lookup (Key.fromText name) (reqParams req) of
  Nothing -> failWith Internal ("params." ++ T.unpack name ++ " is missing from the request")
  Just v -> case parseEither parseJSON v of
    Right x -> pure x
    Left e -> failWith Internal ("params." ++ T.unpack name ++ ": " ++ e)

-- | A parameter the harness omits at its default (the spec's omit_at_default):
-- that default when absent, else as 'param'.
paramOr :: FromJSON a => Request -> Text -> a -> IO a
paramOr req name fallback
  | KM.member (Key.fromText name) (reqParams req) = param req name
  | otherwise = pure fallback

-- | What a workload reports: raw facts, counts, sparse histograms.
data Result = Result
  { measured :: [(Text, Value)]
  , verify :: [(Text, Int64)]
  , histograms :: [(Text, [(Int, Int64)])]
  }

emptyResult :: Result
emptyResult = Result [] [] []

-- | Writes one line to stdout and flushes it. The line goes out in one strict
-- hPut, which holds the handle's lock throughout, so lines written from
-- several threads (a sampler beside the measurement) never interleave.
say :: Value -> IO ()
say v = B.hPut stdout (BL.toStrict (encode v) <> "\n") >> hFlush stdout

-- | hello: the target's folder name, what its runtime is, the variant.
helloLine :: Text -> Text -> Text -> Value
helloLine target version variant =
  object ["type" .= ("hello" :: Text), "target" .= target, "runtime_version" .= version, "variant" .= variant]

progressLine :: Int64 -> Int64 -> Value
progressLine done total = object ["type" .= ("progress" :: Text), "done" .= done, "total" .= total]

-- | A sample: ms since the measurement started, values whose names end in their unit.
sampleLine :: Double -> [(Text, Double)] -> Value
sampleLine tMs values =
  object ["type" .= ("sample" :: Text), "t_ms" .= tMs, "values" .= object [Key.fromText k .= v | (k, v) <- values]]

errorLine :: Kind -> String -> Value
errorLine k msg = object ["type" .= ("error" :: Text), "kind" .= kindName k, "message" .= msg]

resultLine :: Result -> Value
resultLine r =
  object $
    [ "type" .= ("result" :: Text)
    , "measured" .= object [Key.fromText k .= v | (k, v) <- measured r]
    , "verify" .= object [Key.fromText k .= v | (k, v) <- verify r]
    ]
      ++ ["histograms" .= object [Key.fromText k .= [[toInteger i, toInteger c] | (i, c) <- h] | (k, h) <- histograms r] | not (null (histograms r))]
